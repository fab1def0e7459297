-- Up Migration
-- The web page's colours, chosen on the account page: 'system' follows the browser's light or dark
-- preference; 'light' and 'dark' hold whatever the browser prefers. The web page's alone: no protocol carries it.
ALTER TABLE users ADD COLUMN web_theme text NOT NULL DEFAULT 'system'
  CONSTRAINT users_web_theme_check CHECK (web_theme IN ('system', 'light', 'dark'));

-- Down Migration
ALTER TABLE users DROP COLUMN web_theme;
