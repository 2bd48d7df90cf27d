import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';
import './explorer.css';
import { Explorer } from './explorer.tsx';

/**
 * Monaco runs its language services in workers. GraphiQL's own worker set-ups load them from a CDN
 * or expect Vite or webpack; these are built next to this file by explorer/build.ts, so the page
 * loads every script from the service itself.
 */
const WORKERS: Record<string, string> = { json: 'json.worker.js', graphql: 'graphql.worker.js' };
(globalThis as { MonacoEnvironment?: { getWorker(workerId: string, label: string): Worker } }).MonacoEnvironment = {
  getWorker: (_workerId, label) => new Worker(new URL(WORKERS[label] ?? 'editor.worker.js', import.meta.url), { name: label }),
};

createRoot(document.getElementById('explorer')!).render(<Explorer />);
