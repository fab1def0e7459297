-- Up Migration
-- Small copies of podcast and episode artwork that the web page shows (docs/web.md, "Artwork"): each
-- artwork URL castsync knows (a feed's or an item's artwork_url), fetched once, resized to a few fixed
-- widths and encoded as WebP, kept here where every instance serves it. A copy that could not be had keeps
-- why (image null), so that a broken address is not fetched on every request. Keyed by a hash of the URL:
-- an address may be longer than a b-tree key may be.
CREATE TABLE artwork_thumbnails (
  url_hash bytea NOT NULL,
  width integer NOT NULL CHECK (width > 0),
  url text NOT NULL,
  fetched_at timestamptz NOT NULL DEFAULT now(),
  image bytea,
  error text,
  PRIMARY KEY (url_hash, width),
  CHECK ((image IS NULL) <> (error IS NULL))
);

-- Whether castsync knows an artwork URL is asked on a thumbnail's first request: by hash indexes, which
-- take an address of any length. The items' index, on a big table, is built by 1763800000101.
CREATE INDEX feeds_artwork_url ON feeds USING hash (artwork_url);

-- Down Migration
DROP INDEX feeds_artwork_url;
DROP TABLE artwork_thumbnails;
