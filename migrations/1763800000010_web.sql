-- Up Migration
-- The web page: administrators (who manage users there), and browser sessions (a cookie of its own,
-- stored as a digest like every token, listed with the other sessions and revocable).
ALTER TABLE users ADD COLUMN is_admin boolean NOT NULL DEFAULT false;
ALTER TABLE tokens DROP CONSTRAINT tokens_kind_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'personal', 'session', 'web'));

-- Down Migration
DELETE FROM tokens WHERE kind = 'web';
ALTER TABLE tokens DROP CONSTRAINT tokens_kind_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'personal', 'session'));
ALTER TABLE users DROP COLUMN is_admin;
