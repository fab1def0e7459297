-- Up Migration
-- A new record's sync_id is time-ordered (RFC 9562 version 7: 48 bits of Unix milliseconds, then 74 random
-- bits), no longer wholly random (version 4). The unique index on (user_id, sync_id) then takes a new
-- record at the right end of the user's range, a page it has just written, where a random id lands on any
-- page of the range: a POST of 100 new feeds dirtied up to 100 of them, and once the indexes outgrow
-- PostgreSQL's buffers each one is a read and a write (docs/performance.md, "The first POST of never-seen
-- feeds"). The id still says nothing of other users' records; what it tells its own user, when the record
-- was made, the record's times already say. Existing records keep their ids: the two kinds mix freely.
-- PostgreSQL 18 makes such ids itself (uuidv7()); before it, the same bits are set in SQL.
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 180000 THEN
    CREATE FUNCTION castsync_time_ordered_uuid() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE
      RETURN uuidv7();
  ELSE
    CREATE FUNCTION castsync_time_ordered_uuid() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE
      RETURN encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
               PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
               FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid;
  END IF;
END $$;
ALTER TABLE subscriptions ALTER COLUMN sync_id SET DEFAULT castsync_time_ordered_uuid();

-- Down Migration
ALTER TABLE subscriptions ALTER COLUMN sync_id SET DEFAULT gen_random_uuid();
DROP FUNCTION castsync_time_ordered_uuid();
