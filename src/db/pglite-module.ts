import v8 from 'node:v8';

/**
 * PGlite's module, loaded with V8 told to run WebAssembly on its baseline compiler (Liftoff) only.
 * By default V8 also recompiles every hot function of PGlite's 9 MB of WebAssembly with its
 * optimising compiler (TurboFan): that cost about 0.4 s of CPU while the cluster opens and 1 s by
 * a newcomer's first answer, and the service's statements took no less CPU for it (theirs is
 * mostly PGlite's JavaScript and the wire protocol); a statement that sorts and joins 100,000 rows
 * takes up to a quarter more without it (docs/benchmarks.md, "A newcomer's first answer"). The
 * embedded database serves a newcomer and the tests, each a short run. The flag is V8's and holds
 * for the whole process, read when WebAssembly is compiled, so it is set before the first PGlite
 * compiles its module; a process on PostgreSQL never loads PGlite and keeps V8's defaults.
 */
export function loadPGlite(): Promise<typeof import('@electric-sql/pglite')> {
  v8.setFlagsFromString('--liftoff-only');
  return import('@electric-sql/pglite');
}
