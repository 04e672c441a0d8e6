/**
 * The MCP server through the official SDK's own client, against a live
 * service on a real database: the tools are listed and each one called; a
 * document is uploaded from a real local web server and converted; scope
 * refusals name the scope; another workspace's book is invisible.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startService, type TestService } from '../helpers.ts';
import { insertBook } from '../factories.ts';
import { makePdf } from '../documents.ts';

type ToolAnswer = { content: { type: string; text: string }[]; structuredContent?: Record<string, any>; isError?: boolean };

async function connect(svc: TestService, token: string): Promise<Client> {
  const client = new Client({ name: 'flipbook-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: { progress: number; total?: number }) => void): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress, timeout: 180_000 } : { timeout: 180_000 })) as ToolAnswer;
}

const textOf = (answer: ToolAnswer) => answer.content.map((c) => c.text).join('\n');

describe('MCP server (/mcp)', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let documents: http.Server;
  let documentUrl: string;
  let client: Client;

  before(async () => {
    svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
    ws = await svc.workspace({ plan: 'company' });
    const pdf = await makePdf({ pages: 3 });
    documents = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf));
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}/files/Quarterly%20report.pdf`;
    client = await connect(svc, ws.key);
  });
  after(async () => {
    await client?.close();
    documents?.close();
    await svc.stop();
  });

  it('refuses a request without a valid token with 401 and the protected-resource metadata (RFC 9728)', async () => {
    const bare = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    assert.equal(bare.status, 401);
    const challenge = bare.headers.get('www-authenticate')!;
    assert.match(challenge, /^Bearer resource_metadata="/);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    const metadata = await (await fetch(metadataUrl.replace(/^http:\/\/[^/]+/, svc.url))).json();
    assert.equal(metadata.resource, `${svc.url}/mcp`);
    assert.deepEqual(metadata.authorization_servers, [svc.url]);
    assert.ok(metadata.scopes_supported.includes('books:write'));
    const wrong = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: { authorization: 'Bearer wsk_live_nope', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(wrong.status, 401);
  });

  it('lists its tools, each described for a model with an input schema', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'add_readers', 'book_analytics', 'describe_book', 'find_books', 'list_leads', 'publish_book', 'read_book_text',
      'share_book', 'unpublish_book', 'update_book_settings', 'upload_document_from_url',
    ]);
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 40, `${tool.name} is described`);
      assert.equal(tool.inputSchema.type, 'object');
    }
  });

  it('uploads a document from a URL, reports progress and answers with the converted book; then every tool works on it', async () => {
    const progress: number[] = [];
    const uploaded = await callTool(client, 'upload_document_from_url', { url: documentUrl, name: 'Quarterly report' }, (p) => progress.push(p.progress));
    assert.equal(uploaded.isError, undefined, textOf(uploaded));
    assert.match(textOf(uploaded), /Converted: Quarterly report .*3 pages/);
    assert.ok(progress.length > 0, 'progress was reported');
    const bookId = uploaded.structuredContent!.book_id as string;

    const found = await callTool(client, 'find_books', { name: 'Quarterly' });
    assert.match(textOf(found), new RegExp(bookId));
    const described = await callTool(client, 'describe_book', { book_id: bookId });
    assert.match(textOf(described), /Pages: 3 \(conversion ready\)/);

    const text = await callTool(client, 'read_book_text', { book_id: bookId, from_page: 2, to_page: 3 });
    assert.match(textOf(text), /\[Page 2\]\nPage 2 of 3/);
    assert.match(textOf(text), /\[Page 3\]\nPage 3 of 3/);
    assert.doesNotMatch(textOf(text), /Page 1 of 3/);

    const published = await callTool(client, 'publish_book', { book_id: bookId });
    assert.match(textOf(published), /Published/);
    assert.equal((await svc.request('GET', `/v1/books/${bookId}`, { key: ws.key })).body.data.status, 'publish');
    const settings = await callTool(client, 'update_book_settings', { book_id: bookId, title: 'Q3 report', downloadable_pdf: true });
    assert.match(textOf(settings), /Updated Q3 report: title, downloadable_pdf/);
    const after = (await svc.request('GET', `/v1/books/${bookId}`, { key: ws.key })).body.data;
    assert.deepEqual([after.name, after.status, after.settings.downloadable], ['Q3 report', 'publish', true]);

    const shared = await callTool(client, 'share_book', { book_id: bookId, tracked_link_name: 'March newsletter' });
    assert.match(textOf(shared), /Embed code:\n<div[^]*<iframe src="[^"]+\/read\//);
    assert.match(shared.structuredContent!.tracked_link_url, /\?tl=march-newsletter/);

    const readers = await callTool(client, 'add_readers', { book_id: bookId, readers: ['ann@example.com', 'example.org'] });
    assert.match(textOf(readers), /Added 2 of 2/);
    assert.equal((await svc.request('GET', `/v1/books/${bookId}`, { key: ws.key })).body.data.settings.eod_enabled, true);

    const analytics = await callTool(client, 'book_analytics', { book_id: bookId, range: '30d' });
    assert.equal(analytics.isError, undefined, textOf(analytics));
    assert.match(textOf(analytics), /Visits: 0/);
    assert.match(textOf(analytics), /March newsletter \(0\)/);
    const leads = await callTool(client, 'list_leads', { book_id: bookId });
    assert.match(textOf(leads), /No leads/);

    const unpublished = await callTool(client, 'unpublish_book', { book_id: bookId });
    assert.match(textOf(unpublished), /Unpublished/);
  });

  it('says which scope a tool needs when the token lacks it', async () => {
    const book = await insertBook(svc, ws.id);
    const readOnly = await svc.key(ws.id, ['books:read']);
    const limited = await connect(svc, readOnly.key);
    try {
      const refused = await callTool(limited, 'publish_book', { book_id: book.randomId });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /books:write/);
      const allowed = await callTool(limited, 'describe_book', { book_id: book.randomId });
      assert.equal(allowed.isError, undefined);
    } finally {
      await limited.close();
    }
  });

  it('never shows another workspace\'s book', async () => {
    const other = await svc.workspace();
    const theirs = await insertBook(svc, other.id, { name: 'Their secret plans' });
    const described = await callTool(client, 'describe_book', { book_id: theirs.randomId });
    assert.equal(described.isError, true);
    assert.match(textOf(described), /not found/i);
    const found = await callTool(client, 'find_books', { name: 'secret plans' });
    assert.match(textOf(found), /No books match/);
    const read = await callTool(client, 'read_book_text', { book_id: theirs.randomId });
    assert.equal(read.isError, true);
  });

  it('refuses a document URL the outbound policy forbids', async () => {
    const refused = await callTool(client, 'upload_document_from_url', { url: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /Could not fetch the document/);
  });
});
