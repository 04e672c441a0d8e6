/**
 * Benchmark peer: the scale test's round-robin proxy in a process of its own
 * (so it does not share the load generator's thread), in front of the URLs
 * given as arguments. Prints `{ url }` as one JSON line when ready.
 */
import { startProxy } from '../test/scale/cluster.ts';

const targets = process.argv.slice(2);
const proxy = await startProxy(() => targets);
process.stdout.write(`${JSON.stringify({ url: proxy.url, key: '' })}\n`);
process.on('SIGTERM', () => void proxy.close().then(() => process.exit(0)));
