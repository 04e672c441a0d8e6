/**
 * MCP benchmark: `npm run bench:mcp [-- --rounds N]`.
 *
 * Starts the service (embedded database; DATABASE_URL for PostgreSQL) and a
 * local web server holding a generated 12-page PDF, connects the official
 * SDK's client to /mcp with an all-scope key, uploads the PDF with
 * upload_document_from_url (timed once: fetch, upload, conversion), then calls
 * every other tool N times (20 by default) and prints each one's p50 and p95.
 * Reference in the same run: GET /v1/me over HTTP with the same key, the
 * cheapest authenticated call, and GET /v1/books/{book}, the call most tools
 * make at least once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makePdf } from '../test/documents.ts';
import { startService } from '../test/helpers.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
const rounds = Math.max(3, Number(values.rounds));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

const svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
const pdf = await makePdf({ pages: 12 });
const documents = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf));
await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
try {
  process.stdout.write(`bench:mcp on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}, ${rounds} calls per tool\n`);
  const ws = await svc.workspace({ plan: 'company' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ws.key}` } } }));

  const uploadStart = performance.now();
  const uploaded = await client.callTool({ name: 'upload_document_from_url', arguments: { url: `http://127.0.0.1:${(documents.address() as AddressInfo).port}/bench.pdf` } }, undefined, {
    timeout: 300_000,
    onprogress: (p) => process.stdout.write(`\r  upload_document_from_url: ${p.progress}${p.total ? ` of ${p.total}` : ''} pages  `),
  });
  const bookId = (uploaded.structuredContent as { book_id: string }).book_id;
  process.stdout.write(`\r  upload_document_from_url (12-page PDF, converted): ${(performance.now() - uploadStart).toFixed(0)} ms\n`);

  const calls: [string, Record<string, unknown>][] = [
    ['find_books', {}], ['describe_book', { book_id: bookId }], ['read_book_text', { book_id: bookId, from_page: 1, to_page: 10 }],
    ['publish_book', { book_id: bookId }], ['unpublish_book', { book_id: bookId }], ['update_book_settings', { book_id: bookId, flip_sound: true }],
    ['share_book', { book_id: bookId }], ['add_readers', { book_id: bookId, readers: ['ann@example.com'] }],
    ['book_analytics', { book_id: bookId, range: '30d' }], ['list_leads', { book_id: bookId }],
  ];
  const rows: [string, number, number][] = [];
  const time = async (name: string, once: () => Promise<unknown>) => {
    await once(); // warm-up
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      await once();
      samples.push(performance.now() - start);
    }
    samples.sort((a, b) => a - b);
    rows.push([name, percentile(samples, 0.5), percentile(samples, 0.95)]);
  };
  await time('reference: GET /v1/me over HTTP', () => svc.request('GET', '/v1/me', { key: ws.key }));
  await time('reference: GET /v1/books/{book} over HTTP', () => svc.request('GET', `/v1/books/${bookId}`, { key: ws.key }));
  for (const [name, args] of calls) {
    await time(name, async () => {
      const answer = await client.callTool({ name, arguments: args });
      if (answer.isError) throw new Error(`${name}: ${JSON.stringify(answer.content)}`);
    });
  }
  process.stdout.write('\n| Tool | p50 ms | p95 ms |\n|---|---|---|\n');
  for (const [name, p50, p95] of rows) process.stdout.write(`| ${name} | ${p50.toFixed(1)} | ${p95.toFixed(1)} |\n`);
  await client.close();
} finally {
  documents.close();
  await svc.stop();
}
