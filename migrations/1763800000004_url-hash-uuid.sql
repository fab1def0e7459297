-- Up Migration
-- A URL's index key becomes the first 128 bits of the SHA-256 of its matching key, stored as a uuid
-- (src/subscriptions/urls.ts urlHash): 16 bytes compared as one value instead of a 32-byte bytea. The
-- unique indexes on (user_id, url_hash) shrink by about half, and so does the write-ahead log they cost
-- per new feed. Existing hashes keep their first 16 bytes, so every stored URL still matches.
-- This rewrites both tables (a few seconds per million records, with the tables locked).
ALTER TABLE subscriptions
  ALTER COLUMN url_hash TYPE uuid USING encode(substring(url_hash FROM 1 FOR 16), 'hex')::uuid;
ALTER TABLE subscription_urls
  ALTER COLUMN url_hash TYPE uuid USING encode(substring(url_hash FROM 1 FOR 16), 'hex')::uuid;

-- Down Migration
-- The full hashes cannot be recovered from their first half: a downgrade would stop matching URLs.
DO $$
BEGIN
  RAISE EXCEPTION 'castsync: the url_hash migration cannot be undone';
END
$$;
