/**
 * PostGraphile v5 with the amber preset against the bench's database (DATABASE_URL), on PORT, as
 * an internal team would start it: the `public` schema, production settings (NODE_ENV), no
 * GraphiQL. Started by bench/postgraphile.ts on Node >= 22; /stats is not served (its CPU is read
 * from /proc by the bench).
 */
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';

const preset = {
  extends: [PostGraphileAmberPreset],
  // PostGraphile leaves out a backward relation whose foreign key no index starts with; the
  // service's foreign keys carry the workspace first, (workspace_id, course_run_id), and its
  // indexes start with the parent (course_run_id, starts_at, id): without this, no run has sessions.
  disablePlugins: ['PgIndexBehaviorsPlugin'],
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ['public'] })],
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
};

const instance = postgraphile(preset);
const serv = instance.createServ(grafserv);
const server = createServer();
server.on('error', (error) => {
  console.error(error);
  process.exit(1);
});
await serv.addTo(server);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void instance.release().then(() => process.exit(0));
});
