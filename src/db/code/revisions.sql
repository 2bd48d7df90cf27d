-- Calendar revisions: subscribed calendars pick up an edit only when SEQUENCE and LAST-MODIFIED
-- move, so every change to what an event shows bumps the row's revision and its updated_at.

CREATE OR REPLACE FUNCTION bump_revision() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF row(NEW.*) IS DISTINCT FROM row(OLD.*) THEN
    NEW.revision := OLD.revision + 1;
    -- iCalendar times have whole seconds: move to a later second so LAST-MODIFIED moves too.
    NEW.updated_at := greatest(now(), date_trunc('second', OLD.updated_at) + interval '1 second');
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER sessions_bump_revision BEFORE UPDATE ON sessions
  FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE TRIGGER course_templates_bump_revision BEFORE UPDATE ON course_templates
  FOR EACH ROW EXECUTE FUNCTION bump_revision();
