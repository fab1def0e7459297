-- Up Migration
-- The web session a browser turned its notifications on in (its row in tokens, which may be gone): signing
-- out of that session forgets the browser, so a shared computer stops showing the person's new
-- episodes once they sign out. None for a browser added before, or not through the web page.
ALTER TABLE push_subscriptions ADD COLUMN session_id bigint;

-- Down Migration
ALTER TABLE push_subscriptions DROP COLUMN session_id;
