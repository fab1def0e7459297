-- Up Migration
-- Each action as JSON text in the gpodder.net episode-action format, written once when it is stored, so
-- that a full download (every app's first sync) is a concatenation instead of thousands of rows to format
-- (src/episodes/repo.ts, ACTION_JSON: the same expression).
ALTER TABLE episode_actions ADD COLUMN json text;
UPDATE episode_actions a SET json = '{"podcast":' || to_json(a.podcast_url)::text
     || ',"episode":' || to_json(a.episode_url)::text
     || coalesce(',"guid":' || to_json(a.episode_guid)::text, '')
     || ',"action":' || to_json(a.action)::text
     || ',"timestamp":"' || to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '"'
     || coalesce(',"device":' || to_json(a.device_id)::text, '')
     || coalesce(',"started":' || a.started, '')
     || coalesce(',"position":' || a.position, '')
     || coalesce(',"total":' || a.total, '')
     || '}';
ALTER TABLE episode_actions ALTER COLUMN json SET NOT NULL;

-- Down Migration
ALTER TABLE episode_actions DROP COLUMN json;
