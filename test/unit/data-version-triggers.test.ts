import { describe, expect, it } from 'vitest';
import { dataVersionTriggers, triggerFunctions, watchedInFile, workspacePath } from '../../src/sql/data-version-triggers.ts';
import { serviceModel } from '../../src/model/service-model.ts';

const { registry } = serviceModel();

describe('the data-version triggers written from the watched tables', () => {
  it('a table finds its workspace by its own key, its workspace_id column, or the row it belongs to', () => {
    expect(workspacePath(registry.get('Workspace'))).toBe('self');
    expect(workspacePath(registry.get('CourseRun'))).toBe('column');
    expect(workspacePath(registry.get('Participant'))).toBe('through');
    expect(triggerFunctions({ table: 'sessions', path: 'column' })).toEqual({ statement: 'bump_data_versions_of_rows', replicated: 'bump_data_versions_of_replicated_row' });
    expect(triggerFunctions({ table: 'participants', path: 'through' })).toEqual({
      statement: 'bump_data_versions_of_participants',
      replicated: 'bump_data_versions_of_replicated_participants',
    });
  });

  it('each table gets a trigger per statement event, TRUNCATE in every role and a row trigger in replica role, and the file names who reads it', () => {
    const text = dataVersionTriggers([
      { table: 'sessions', path: 'column', readBy: new Map([['courses', ['id', 'starts_at']]]) },
      { table: 'participants', path: 'through', readBy: new Map([['bookings', ['name']]]) },
    ]);
    expect(text).toContain('-- sessions: read by courses (id, starts_at).');
    expect(text).toContain('CREATE TRIGGER sessions_data_version_update AFTER UPDATE ON sessions\n  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();');
    expect(text).toContain('ALTER TABLE sessions ENABLE REPLICA TRIGGER sessions_data_version_in_replica;');
    expect(text).toContain('ALTER TABLE participants ENABLE ALWAYS TRIGGER participants_data_version_truncate;');
    expect(text).toContain('FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_participants();');
    expect(watchedInFile(text)).toEqual(new Set(['sessions', 'participants']));
  });
});
