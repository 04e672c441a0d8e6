/**
 * The outbound client against real local HTTP servers: what the policy
 * refuses never gets a connection, what the allow-list admits works over
 * plain http, redirects are handed back unfollowed, and every request has a
 * deadline and a size cap.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OutboundClient, OutboundRequestError } from '../../src/platform/outbound/outbound-client.ts';
import { OutboundPolicy, OutboundRefusedError } from '../../src/platform/outbound/outbound-policy.ts';
import { ConfigError, loadConfig } from '../../src/platform/config/env.ts';

describe('outbound policy', () => {
  const policy = new OutboundPolicy('');

  it('admits public unicast addresses and refuses every private, loopback, link-local, multicast and reserved form', () => {
    for (const address of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '8.8.8.8']) assert.ok(policy.isAddressAllowed(address), address);
    for (const address of [
      '127.0.0.1', '127.1.2.3', '10.0.0.5', '172.16.3.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
      '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254', '::ffff:10.0.0.1', 'not-an-ip',
    ]) assert.equal(policy.isAddressAllowed(address), false, address);
  });

  it('refuses schemes, credentials, plain http and literal private addresses before any network use', () => {
    const cases: [string, string][] = [
      ['ftp://example.com/feed', 'scheme'],
      ['file:///etc/passwd', 'scheme'],
      ['http://example.com/hook', 'scheme'],
      ['https://user:pass@example.com/hook', 'credentials'],
      ['https://127.0.0.1/hook', 'address'],
      ['https://[::1]/hook', 'address'],
      ['https://[::ffff:7f00:1]/hook', 'address'],
      ['https://169.254.169.254/latest/meta-data/', 'address'],
      ['not a url', 'malformed'],
    ];
    for (const [url, reason] of cases) {
      assert.throws(() => policy.checkUrl(url), (error: unknown) => error instanceof OutboundRefusedError && error.reason === reason, url);
    }
    assert.equal(policy.checkUrl('https://example.com/hook').hostname, 'example.com');
  });

  it('refuses a name that resolves to loopback when saving', async () => {
    await assert.rejects(policy.checkTarget('https://localhost/hook'), (error: unknown) => error instanceof OutboundRefusedError && error.reason === 'address');
  });

  it('admits what the allow-list names: host names, addresses and CIDR ranges, over http too', async () => {
    const allowed = new OutboundPolicy('localhost, 10.1.0.0/16, ::1, feeds.internal');
    assert.ok(allowed.isAddressAllowed('10.1.200.3'));
    assert.equal(allowed.isAddressAllowed('10.2.0.1'), false);
    assert.ok(allowed.isAddressAllowed('::1'));
    assert.ok(allowed.isAddressAllowed('192.168.0.9', 'feeds.internal'));
    assert.equal(allowed.checkUrl('http://feeds.internal:8080/feed.xml').port, '8080');
    assert.ok(await allowed.checkTarget('http://localhost:9/hook'));
  });

  it('reports malformed allow-list entries in the configuration check', () => {
    assert.throws(() => loadConfig({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1, 10.0.0.0/99, bad host!' }), (error: unknown) =>
      error instanceof ConfigError && /10\.0\.0\.0\/99/.test(error.message) && /bad host!/.test(error.message));
  });
});

describe('outbound client against local servers', () => {
  let server: http.Server;
  let port: number;
  const hits: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      } else if (req.url === '/slow') {
        setTimeout(() => res.end('late'), 2_000);
      } else if (req.url === '/big') {
        res.end(Buffer.alloc(64 * 1024, 'x'));
      } else {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${body}`));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  it('never connects to a loopback receiver that is not allow-listed, by address or by name', async () => {
    const client = new OutboundClient({ allowedHosts: '' });
    try {
      const before = hits.length;
      for (const url of [`http://127.0.0.1:${port}/hook`, `https://127.0.0.1:${port}/hook`, `https://localhost:${port}/hook`]) {
        await assert.rejects(client.request(url), (error: unknown) => error instanceof OutboundRequestError && error.kind === 'refused', url);
      }
      assert.equal(hits.length, before, 'the receiver saw no request');
    } finally {
      await client.close();
    }
  });

  it('delivers to an allow-listed receiver over http, hands back redirects unfollowed, and caps time and size', async () => {
    const client = new OutboundClient({ allowedHosts: '127.0.0.1' });
    try {
      const posted = await client.request(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
      assert.equal(posted.status, 200);
      assert.equal(posted.body.toString(), 'POST {"a":1}');

      const redirected = await client.request(`http://127.0.0.1:${port}/redirect`);
      assert.equal(redirected.status, 302);
      assert.ok(!hits.some((h) => h.includes('meta-data')));

      await assert.rejects(client.request(`http://127.0.0.1:${port}/slow`, { timeoutMs: 200 }), (error: unknown) => error instanceof OutboundRequestError && error.kind === 'timeout');

      const truncated = await client.request(`http://127.0.0.1:${port}/big`, { maxResponseBytes: 4096, onTooLarge: 'truncate' });
      assert.equal(truncated.body.length, 4096);
      assert.equal(truncated.truncated, true);
      await assert.rejects(client.request(`http://127.0.0.1:${port}/big`, { maxResponseBytes: 4096 }), (error: unknown) => error instanceof OutboundRequestError && error.kind === 'too_large');
    } finally {
      await client.close();
    }
  });

  it('refuses a name whose address is not admitted even when another host is allow-listed', async () => {
    const client = new OutboundClient({ allowedHosts: '10.9.9.9' });
    try {
      await assert.rejects(client.request(`https://localhost:${port}/hook`), (error: unknown) => error instanceof OutboundRequestError && error.kind === 'refused');
    } finally {
      await client.close();
    }
  });
});
