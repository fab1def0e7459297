-- Up Migration
-- Lets one statement give up as a whole: a POST of feeds that are all new inserts them in one statement,
-- which must write nothing if any of them turns out to exist (src/subscriptions/repo.ts insertIfAllNew).
CREATE FUNCTION castsync_conflict_if(condition boolean) RETURNS boolean
  LANGUAGE plpgsql AS $$
BEGIN
  IF condition THEN
    RAISE EXCEPTION 'castsync: a feed of the request already exists' USING ERRCODE = 'CS409';
  END IF;
  RETURN false;
END
$$;

-- Down Migration
DROP FUNCTION castsync_conflict_if(boolean);
