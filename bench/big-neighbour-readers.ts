/**
 * A's readers in the big-neighbour bench, a process of their own placed with the load generator
 * (`BENCH_LOAD_CPUS`): each key asks for `url` once every `askEveryMs` (or as soon as its last
 * answer is read, if that took longer), on its own keep-alive connection, until its standard
 * input closes; then it writes each answer's time to its first bytes (ms) as JSON on stdout.
 *
 *   node --import tsx bench/big-neighbour-readers.ts '{"url":…,"keys":[…],"askEveryMs":500}'
 */
import { LeanClient } from './lean-get.ts';

interface Orders {
  url: string;
  keys: string[];
  askEveryMs: number;
}

const orders = JSON.parse(process.argv[2] ?? '{}') as Orders;
const { origin, pathname } = new URL(orders.url);
let running = true;
const times: number[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const readers = orders.keys.map(async (key, i) => {
  const client = new LeanClient(origin, { authorization: `Bearer ${key}` });
  await sleep((i * orders.askEveryMs) / orders.keys.length);
  try {
    while (running) {
      const [answer] = await Promise.all([client.get(pathname), sleep(orders.askEveryMs)]);
      times.push(answer.ms);
    }
  } finally {
    client.close();
  }
});

process.stdin.resume();
process.stdin.on('end', () => (running = false));
try {
  await Promise.all(readers);
  process.stdout.write(JSON.stringify(times));
} catch (error) {
  running = false;
  process.stderr.write(`A's readers: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  process.stdin.destroy();
}
