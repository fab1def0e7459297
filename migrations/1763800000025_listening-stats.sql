-- Up Migration
-- Each user's time zone: the listening statistics count days, weeks, months and years in it (UTC when the
-- user has no row).
CREATE TABLE user_time_zones (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  time_zone text NOT NULL
);

-- Down Migration
DROP TABLE user_time_zones;
