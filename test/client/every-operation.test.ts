/**
 * Every operation of openapi.json, called through @flipbook/client against
 * the live service: each call is a typed call (path, parameters and body
 * checked by tsc against the generated schema), and each answer, as the
 * client received it, must carry a status the document lists for the
 * operation and match the schema documented for that status (Ajv). Most calls
 * succeed in a small scenario (a book uploaded and converted, its links,
 * access list, webhooks, a catalog rendered; a person signed in with a link,
 * then through the session cookie and its CSRF token: account, sessions,
 * members, invitations, API keys); a few accept a documented refusal where
 * the state they need is not worth making (a finished batch cannot be
 * cancelled: 409; passkeys need WebAuthn and a domain name: 403).
 *
 * The list of operations is read from openapi.json when the test runs: an
 * operation added to the API without a call here fails the last test, except
 * a new people operation (sign-in under /v1/auth, account, members,
 * invitations, API keys, audit trail), which that test calls with the API key:
 * one that needs a signed-in person must answer 401 or 403, and every answer
 * must be documented.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createFlipbookClient, paginate, toFormData, unwrap, uploadAndWait,
  type FlipbookClient, type FlipbookClientOptions, type ResultLike, type paths,
} from '@flipbook/client';
import type { Middleware } from 'openapi-fetch';
import { makePdf, makePng } from '../documents.ts';
import { createValidator, type OpenApiDocument } from '../fuzz/openapi-fuzz.ts';
import { eventually, startService, type TestService } from '../helpers.ts';
import { mailedLink, tokenOf } from '../people/people-helpers.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const doc = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../openapi.json'), 'utf8')) as OpenApiDocument;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const operations = Object.entries(doc.paths).flatMap(([route, item]) =>
  METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), route, operationId: item[m]!.operationId })));

/** Paths of the operations of people (docs/people-and-teams.md): sign-in steps under /v1/auth, and the rest, which need a signed-in person. */
const PEOPLE = /^\/v1\/(auth|account|members|invitations|api-keys|audit-trail)(\/|$)/;
/** Of those, the ones that need a session: an API key gets 401 or 403. */
const SESSION_ONLY = /^\/v1\/(account|members|invitations|api-keys|audit-trail)(\/|$)/;
/** Reached without a session: accepting an invitation signs the invitee in. */
const PUBLIC_PEOPLE = /^\/v1\/invitations\/accept$/;
const SHOPIFY_SECRET = 'shpss_every_operation_secret_0123456789';

interface Exchange {
  method: string;
  route: string;
  status: number;
  problem: string | null;
}

describe(`every operation of openapi.json through the client (${operations.length})`, () => {
  let svc: TestService;
  let receiver: Receiver;
  let client: FlipbookClient;
  let workspaceId: number;
  const exchanges: Exchange[] = [];
  const validate = createValidator(doc);

  /** Checks each answer the client gets against the document: the status is listed, the body has its schema. */
  function checkAnswer(method: string, route: string, response: Response, text: string): string | null {
    const operation = doc.paths[route]?.[method.toLowerCase()];
    if (!operation) return 'not an operation of openapi.json';
    const documented = operation.responses[String(response.status)];
    if (!documented) return `status ${response.status} is not documented: ${text.slice(0, 300)}`;
    const contentType = response.headers.get('content-type') ?? '';
    const media = documented.content ?? {};
    if (Object.keys(media).length === 0) return null;
    const type = Object.keys(media).find((t) => contentType.startsWith(t));
    if (!type) return `content-type ${contentType} is not one of ${Object.keys(media).join(', ')}`;
    const schema = media[type]?.schema;
    if (!schema || !type.includes('json')) return null;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return 'the body is not JSON';
    }
    const problem = validate(schema, body);
    return problem && `${response.status} does not match its documented schema: ${problem}`;
  }

  /** The answer of a call that must succeed (a FlipbookApiError says why it did not). */
  const ok = unwrap;
  /** The answer of a call that may also be refused with one of the given (documented) statuses. */
  async function answered<R extends ResultLike>(statuses: number[], call: Promise<R>): Promise<R> {
    const result = await call;
    assert.ok(statuses.includes(result.response.status), `${result.response.status} ${JSON.stringify(result.error ?? result.data).slice(0, 300)}`);
    return result;
  }

  /** Records and checks every answer a client of this test receives. */
  const recorder: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const problem = checkAnswer(request.method, schemaPath, response, await response.clone().text());
      exchanges.push({ method: request.method, route: schemaPath, status: response.status, problem });
    },
  };
  const newClient = (options: FlipbookClientOptions = {}) => {
    const created = createFlipbookClient({ baseUrl: svc.url, ...options });
    created.use(recorder);
    return created;
  };

  before(async () => {
    svc = await startService({
      env: {
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', SHOPIFY_CLIENT_SECRET: SHOPIFY_SECRET, AUTH_PASSWORDS: true,
        RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0,
      },
    });
    receiver = await startReceiver();
    const ws = await svc.workspace({ plan: 'company' });
    workspaceId = ws.id;
    await svc.runtime.services.connector.grant(ws.keyId, 'acme.myshopify.com');
    client = newClient({ token: ws.key });
  });
  after(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  let book: { random_id: string };
  let batchId: string;

  it('service, workspace, uploads and books', async () => {
    assert.equal((await ok(client.GET('/v1/health'))).status, 'ok');
    assert.equal((await ok(client.GET('/v1/health/ready'))).status, 'ready');
    assert.equal((await ok(client.GET('/v1/me'))).data.plan.name, 'company');

    const pdf = new File([new Uint8Array(await makePdf({ pages: 2, links: true }))], 'Every operation.pdf');
    const uploaded = await uploadAndWait(client, pdf, { pollIntervalMs: 200 });
    book = uploaded.book;
    batchId = uploaded.batch.id;
    assert.equal((await ok(client.GET('/v1/batches/{batchId}', { params: { path: { batchId } } }))).data.status, 'completed');
    assert.equal((await ok(client.GET('/v1/books/uploads/{batchId}/status', { params: { path: { batchId } } }))).data.id, batchId);
    await ok(client.GET('/v1/books/uploads/status/active'));
    // Finished: 409. (A batch still in flight is cancelled with 200; which one this is depends on the worker's speed.)
    await answered([200, 409], client.DELETE('/v1/batches/{batchId}', { params: { path: { batchId } } }));

    const listed = [];
    for await (const b of paginate(client, '/v1/books', { query: { limit: 1 } })) listed.push(b.random_id);
    assert.deepEqual(listed, [book.random_id]);
    assert.equal((await ok(client.GET('/v1/books/{book}', { params: { path: { book: book.random_id } } }))).data.page_count, 2);
    const updated = await ok(client.PUT('/v1/books/{book}', { params: { path: { book: book.random_id } }, body: { status: 'publish', title: 'Every operation', flip_sound: true } }));
    assert.equal(updated.data.status, 'publish');
    assert.equal((await ok(client.GET('/v1/books/{book}/pages', { params: { path: { book: book.random_id }, query: { limit: 1 } } }))).data.length, 1);
    await ok(client.GET('/v1/books/{book}/outline', { params: { path: { book: book.random_id } } }));

    // A new version of the book, then version 1 restored: the later tests read the book as it was.
    const v2 = new File([new Uint8Array(await makePdf({ pages: 2 }))], 'Every operation v2.pdf');
    const replaced = await ok(client.POST('/v1/books/{book}/versions', { params: { path: { book: book.random_id } }, body: { 'files[]': v2 as unknown as string }, bodySerializer: toFormData }));
    await eventually(async () => (await ok(client.GET('/v1/batches/{batchId}', { params: { path: { batchId: replaced.data.id } } }))).data.status === 'completed');
    assert.deepEqual((await ok(client.GET('/v1/books/{book}/versions', { params: { path: { book: book.random_id } } }))).data.map((v) => [v.number, v.current]), [[2, true], [1, false]]);
    assert.equal((await ok(client.POST('/v1/books/{book}/versions/{version}/restore', { params: { path: { book: book.random_id, version: 1 } } }))).data.current, true);
  });

  it('bulk settings', async () => {
    const summary = await ok(client.POST('/v1/books/bulk-settings/summary', { body: { book_ids: [book.random_id] } }));
    const revision = summary.data.books[0]!.settings_revision;
    const created = await ok(client.POST('/v1/books/bulk-settings/batches', { body: { books: [{ id: book.random_id, settings_revision: revision }], settings: { share_social_media: false } } }));
    const batch = String(created.data.id);
    await ok(client.GET('/v1/books/bulk-settings/batches/{batch}', { params: { path: { batch } } }));
    // Cancelled while queued or running, 409 once it finished; a retry needs a failed item: 409 otherwise.
    await answered([200, 409], client.DELETE('/v1/books/bulk-settings/batches/{batch}', { params: { path: { batch } } }));
    await answered([202, 409], client.POST('/v1/books/bulk-settings/batches/{batch}/retry', { params: { path: { batch } } }));
  });

  it('brand', async () => {
    assert.equal((await ok(client.GET('/v1/brand'))).data.brand, null);
    const logo = new File([new Uint8Array(await makePng(64, 64))], 'logo.png', { type: 'image/png' });
    const created = await ok(client.POST('/v1/brand', { body: { company_name: 'Acme', primary_color: '#123456', file: logo as unknown as string }, bodySerializer: toFormData }));
    const updated = await ok(client.PUT('/v1/brand', { body: { id: created.data.brand.id, company_name: 'Acme Outdoor' }, bodySerializer: toFormData }));
    assert.equal(updated.data.brand.company_name, 'Acme Outdoor');
    await ok(client.POST('/v1/toggle-take-over-branding'));
  });

  it('access list, embed domains, tracked links, lead form', async () => {
    const book_ = { params: { path: { book: book.random_id } } };
    const entry = await ok(client.POST('/v1/subscribers', { body: { book_id: book.random_id, email: 'reader@example.com' } }));
    assert.ok((await ok(client.GET('/v1/subscribers', { params: { query: { 'pagination[per_page]': 10 } } }))).data.some((s) => s.id === entry.data.id));
    await ok(client.DELETE('/v1/subscribers/{subscriber}', { params: { path: { subscriber: entry.data.id } } }));
    const imported = await ok(client.POST('/v1/subscribers/import', { body: { book_id: book.random_id, entries: [{ email: 'ann@example.com' }, { email: 'not an address' }], dry_run: false } }));
    assert.deepEqual(imported.data.map((r) => r.outcome), ['added', 'invalid']);
    assert.equal((await ok(client.POST('/v1/subscribers/clear', { body: { book_id: book.random_id } }))).data.removed, 1);

    const domain = await ok(client.POST('/v1/books/{book}/embed-domains', { ...book_, body: { domain: 'shop.example.com' } }));
    assert.equal((await ok(client.GET('/v1/books/{book}/embed-domains', book_))).data.length, 1);
    await ok(client.DELETE('/v1/books/{book}/embed-domains/{embedDomain}', { params: { path: { book: book.random_id, embedDomain: Number(domain.data.id) } } }));

    const link = await ok(client.POST('/v1/books/{book}/tracked-links', { ...book_, body: { name: 'Newsletter' } }));
    assert.equal((await ok(client.GET('/v1/books/{book}/tracked-links', book_))).data[0]!.id, link.data.id);
    await ok(client.DELETE('/v1/books/{book}/tracked-links/{trackedLink}', { params: { path: { book: book.random_id, trackedLink: link.data.id } } }));

    await ok(client.GET('/v1/books/{book}/lead-form', book_));
    const form = await ok(client.PUT('/v1/books/{book}/lead-form', { ...book_, body: { enabled: true, title: 'Stay in touch', show_after_page: 1 } }));
    assert.equal(form.data.enabled, true);
  });

  it('templates, content books and the editor', async () => {
    assert.ok((await ok(client.GET('/v1/templates', { params: { query: { type: 'posts' } } }))).data.length > 0);
    const fromTemplate = await ok(client.POST('/v1/books/create-from-template', {
      body: { source: 'wordpress', source_type: 'posts', content: [{ id: 'p1', title: 'Spring planting', content: '<p>Compost first.</p>' }], title: 'Garden notes' },
    }));
    assert.ok(fromTemplate.data.book.random_id);

    const page = `data:image/png;base64,${(await makePng(400, 566)).toString('base64')}`;
    const editor = await ok(client.POST('/v1/books/konva', {
      body: { title: 'Editor book', canvas: { width: 400, height: 566, orientation: 'portrait', objects: [[JSON.stringify({ className: 'Text', attrs: { text: 'Hello' } })]] }, page_images: [page] },
    }));
    const editorBook = { params: { path: { book: editor.data.book.random_id } } };
    assert.equal((await ok(client.GET('/v1/books/{book}/konva', editorBook))).data.canvas.width, 400);
    await ok(client.DELETE('/v1/books/{book}', editorBook));
  });

  it('catalogs', async () => {
    const created = await ok(client.POST('/v1/catalogs', { body: { name: 'Spring' } }));
    const catalog = created.data.catalog.id;
    const inCatalog = { params: { path: { catalog } } };
    await ok(client.GET('/v1/catalogs', { params: { query: { limit: 10 } } }));
    await ok(client.GET('/v1/catalogs/{catalog}', inCatalog));
    const waitFor = (syncJob: number) => eventually(async () => {
      const { data } = await ok(client.GET('/v1/catalogs/{catalog}/sync-jobs/{syncJob}', { params: { path: { catalog, syncJob } } }));
      return ['completed', 'failed'].includes(data.sync_job.status) ? data.sync_job : null;
    });
    const upserted = await ok(client.POST('/v1/catalogs/{catalog}/items:bulk-upsert', {
      ...inCatalog, body: { items: [['external_item_key=tee', 'title=Tee', 'price=19.90', 'currency=EUR'], ['external_item_key=cap', 'title=Cap', 'price=9.90', 'currency=EUR']] },
    }));
    assert.equal((await waitFor(upserted.data.sync_job.id)).status, 'completed');
    const availability = await ok(client.PATCH('/v1/catalogs/{catalog}/items/availability', { ...inCatalog, body: { items: [['external_item_key=cap', 'available=false']] } }));
    assert.equal((await waitFor(availability.data.sync_job.id)).status, 'completed');
    const jobs = await ok(client.GET('/v1/catalogs/{catalog}/sync-jobs', { ...inCatalog, params: { ...inCatalog.params, query: { limit: 10 } } }));
    assert.deepEqual(jobs.data.map((j) => j.id).slice(0, 2), [availability.data.sync_job.id, upserted.data.sync_job.id]);
    const items = [];
    for await (const item of paginate(client, '/v1/catalogs/{catalog}/items', { path: { catalog } })) items.push(item);
    assert.deepEqual(items.map((i) => i.external_item_key).sort(), ['cap', 'tee']);
    const rendered = await ok(client.POST('/v1/catalogs/{catalog}/render', { ...inCatalog, body: { items: ['tee'], title: 'Spring offers' } }));
    assert.ok(rendered.data.batch_id);
    await ok(client.DELETE('/v1/catalogs/{catalog}/items/{item}', { params: { path: { catalog, item: items[0]!.id } } }));
    await ok(client.DELETE('/v1/catalogs/{catalog}', inCatalog));
  });

  it('the Shopify connector', async () => {
    const sign = (body: unknown) => createHmac('sha256', SHOPIFY_SECRET).update(JSON.stringify(body)).digest('base64');
    const compliance = { topic: 'customers/data_request' as const, shopDomain: 'acme.myshopify.com', payload: { shop_id: 1, shop_domain: 'acme.myshopify.com', customer: { email: 'nobody@example.com' }, data_request: { id: 9 } } };
    await ok(client.POST('/v1/integrations/shopify/webhooks', { params: { header: { 'x-shopify-hmac-sha256': sign(compliance) } }, body: compliance }));
    const name = { workspace_name: 'Acme Outdoor' };
    const renamed = await ok(client.POST('/v1/integrations/shopify/workspace-name', { body: name, headers: { 'x-shopify-hmac-sha256': sign(name) } }));
    assert.equal(renamed.data.workspace.name, 'Acme Outdoor');
  });

  it('analytics and exports', async () => {
    const book_id = book.random_id;
    await ok(client.GET('/v1/analytics/audit-log', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/book-flow', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/book-view-events', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/interaction-events', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/leads', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/page-performance', { params: { query: { book_id, date: '30d' } } }));
    await ok(client.GET('/v1/analytics/reader-pages', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/readers', { params: { query: { book_id, include_anonymous: true } } }));
    assert.equal((await ok(client.GET('/v1/analytics/reading-session-pages', { params: { query: { book_id, view_event_id: 1 } } }))).meta.found, false);
    // No reader has visited yet: the session is unknown.
    await answered([404], client.GET('/v1/analytics/reader-journey', { params: { query: { session_id: 'no-such-visit' } } }));
    // The workspace-level operations and the analytics settings.
    await ok(client.GET('/v1/analytics/summary', { params: { query: { date: '30d', exclude_team: true } } }));
    await ok(client.GET('/v1/analytics/views-over-time', { params: { query: { book_id, date: '7d' } } }));
    await ok(client.GET('/v1/analytics/top-books', { params: { query: { limit: 5 } } }));
    await ok(client.GET('/v1/analytics/top-tracked-links', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/top-embedding-sites', { params: { query: {} } }));
    await ok(client.GET('/v1/analytics/reading-now', { params: { query: { book_id } } }));
    await ok(client.GET('/v1/analytics/settings'));
    await ok(client.PATCH('/v1/analytics/settings', { body: { time_zone: 'Europe/Paris', team_exclusions: ['acme.example'] } }));

    const path_ = { path: { book: book.random_id } };
    const csv = [
      await ok(client.GET('/v1/exports/analytics/{book}', { params: path_, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/access-audit', { params: path_, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/audit-log', { params: path_, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/interaction-events', { params: path_, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/leads', { params: path_, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/page-performance', { params: path_, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/reader-pages', { params: { ...path_, query: { bom: false } }, parseAs: 'text' })),
      await ok(client.GET('/v1/exports/books/{book}/readers', { params: path_, parseAs: 'text' })),
    ];
    for (const text of csv) assert.match(text, /^\uFEFF?[\w" ]+,/, 'a CSV header row');
  });

  it('webhook subscriptions and deliveries', async () => {
    const options = await ok(client.GET('/v1/webhook-subscriptions/options'));
    assert.ok(options.data.event_types.some((e) => e.value === 'subscriber.added'));
    await ok(client.GET('/v1/webhook-subscriptions/sample-events', { params: { query: { event_types: 'subscriber.added' } } }));
    const created = await ok(client.POST('/v1/webhook-subscriptions', { body: { name: 'Receiver', target_url: `${receiver.url}/hook`, event_types: ['subscriber.added'] } }));
    const subscription = { params: { path: { subscription: created.data.id } } };
    await ok(client.GET('/v1/webhook-subscriptions', { params: { query: { limit: 5 } } }));
    await ok(client.GET('/v1/webhook-subscriptions/{subscription}', subscription));
    await ok(client.PUT('/v1/webhook-subscriptions/{subscription}', { ...subscription, body: { name: 'Receiver (renamed)' } }));
    await ok(client.POST('/v1/webhook-subscriptions/{subscription}/enable', subscription));
    await ok(client.POST('/v1/webhook-subscriptions/{subscription}/rotate-secret', subscription));
    const test = await ok(client.POST('/v1/webhook-subscriptions/{subscription}/test', subscription));
    const delivery = { params: { path: { subscription: created.data.id, delivery: test.data.id } } };
    const done = await eventually(async () => {
      const { data } = await ok(client.GET('/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}', delivery));
      return data.status === 'succeeded' ? data : null;
    });
    assert.equal(done.event_id.startsWith('evt_test_'), true);
    assert.equal((await ok(client.GET('/v1/webhook-subscriptions/{subscription}/deliveries', subscription))).data.length, 1);
    await ok(client.POST('/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}/redeliver', delivery));
    await ok(client.POST('/v1/webhooks', { body: { event: 'flipbook.created', url: `${receiver.url}/sample` } }));
    await ok(client.DELETE('/v1/webhook-subscriptions/{subscription}', subscription));
  });

  it('deletes the book', async () => {
    await ok(client.DELETE('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
    await answered([404], client.GET('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
  });

  it('people: sign-in, account, sessions, passkeys, members, invitations, API keys, audit trail (with a session cookie and its CSRF token)', async () => {
    /** A browser's cookie jar, for the session cookie. */
    const browser = (): FlipbookClientOptions & { csrf?: string } => {
      let cookie: string | undefined;
      const options: FlipbookClientOptions & { csrf?: string } = {
        csrfToken: () => options.csrf,
        fetch: async (request) => {
          if (cookie) request.headers.set('cookie', cookie);
          const response = await fetch(request);
          const set = response.headers.getSetCookie().find((c) => c.startsWith('flipbook_session='));
          if (set) cookie = set.split(';')[0];
          return response;
        },
      };
      return options;
    };
    const email = 'owner@example.com';
    const password = 'correct horse battery staple';
    await svc.runtime.services.members.addByOperator(workspaceId, email, 'owner', { type: 'operator' });

    const owner = browser();
    const session = newClient(owner);
    assert.equal((await ok(session.GET('/v1/auth/methods'))).data.password, true);
    await ok(session.POST('/v1/auth/sign-in-links', { body: { email } }));
    const signedIn = await ok(session.POST('/v1/auth/sign-in-links/verify', { body: { token: tokenOf(await mailedLink(svc, email, 'sign-in/verify')) } }));
    owner.csrf = signedIn.data.csrf_token;
    await ok(session.PUT('/v1/account/active-workspace', { body: { workspace_id: workspaceId } }));
    assert.equal((await ok(session.PATCH('/v1/account', { body: { name: 'Olive Owner' } }))).data.user.name, 'Olive Owner');
    assert.equal((await ok(session.GET('/v1/account'))).data.active_workspace?.id, workspaceId);
    await ok(session.PUT('/v1/account/password', { body: { password } }));

    // A second session, signed in with the password, ended from the first; a third signs out by itself.
    const second = newClient(browser());
    await ok(second.POST('/v1/auth/password', { body: { email, password } }));
    const sessions = (await ok(session.GET('/v1/account/sessions'))).data;
    const other = sessions.find((s) => !s.current)!;
    await ok(session.DELETE('/v1/account/sessions/{sessionId}', { params: { path: { sessionId: other.id } } }));
    const third = browser();
    const thirdSession = newClient(third);
    third.csrf = (await ok(thirdSession.POST('/v1/auth/password', { body: { email, password } }))).data.csrf_token;
    await ok(thirdSession.POST('/v1/auth/sign-out'));

    // Passkeys need WebAuthn in a browser and a service addressed by a domain name (this one listens on 127.0.0.1): refused as documented.
    assert.deepEqual((await ok(session.GET('/v1/account/passkeys'))).data, []);
    await answered([403], session.POST('/v1/account/passkeys/options'));
    await answered([400, 403, 404, 422], session.POST('/v1/account/passkeys', { body: { challenge_id: 'none', response: {} } }));
    await answered([404], session.DELETE('/v1/account/passkeys/{passkeyId}', { params: { path: { passkeyId: 1 } } }));
    await answered([403], session.POST('/v1/auth/passkeys/options'));
    await answered([400, 401, 403, 422], session.POST('/v1/auth/passkeys/verify', { body: { challenge_id: 'none', response: {} } }));

    const invitee = 'editor@example.com';
    const invitation = await ok(session.POST('/v1/invitations', { body: { email: invitee, role: 'editor' } }));
    await ok(session.POST('/v1/invitations/{invitationId}/resend', { params: { path: { invitationId: invitation.data.id } } }));
    assert.equal((await ok(session.GET('/v1/invitations'))).data.length, 1);
    await ok(newClient(browser()).POST('/v1/invitations/accept', { body: { token: tokenOf(await mailedLink(svc, invitee, 'invitations/accept')) } }));
    const editor = (await ok(session.GET('/v1/members'))).data.find((m) => m.email === invitee)!;
    assert.equal((await ok(session.PATCH('/v1/members/{userId}', { params: { path: { userId: editor.user_id } }, body: { role: 'viewer' } }))).data.role, 'viewer');
    await ok(session.DELETE('/v1/members/{userId}', { params: { path: { userId: editor.user_id } } }));
    const revoked = await ok(session.POST('/v1/invitations', { body: { email: 'late@example.com', role: 'viewer' } }));
    await ok(session.DELETE('/v1/invitations/{invitationId}', { params: { path: { invitationId: revoked.data.id } } }));

    const key = await ok(session.POST('/v1/api-keys', { body: { name: 'Reporting', scopes: ['books:read'], mode: 'test' } }));
    assert.ok((await ok(session.GET('/v1/api-keys'))).data.some((k) => k.id === key.data.id));
    const rotated = await ok(session.POST('/v1/api-keys/{keyId}/rotate', { params: { path: { keyId: key.data.id } }, body: {} }));
    await ok(session.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: rotated.data.id } } }));
    const trail = [];
    for await (const event of paginate(session, '/v1/audit-trail', { query: { limit: 2 } })) trail.push(event);
    assert.ok(trail.length >= 5, `${trail.length} audit events`);

    // OAuth: apps registered and deleted; consent and device approval need a pending request (test/oauth drives them whole): an unknown one answers 404.
    const app = await ok(session.POST('/v1/oauth-apps', { body: { name: 'Design tool', redirect_uris: ['https://tool.example/callback'], public: false } }));
    assert.ok(app.data.client_secret, 'a confidential app\'s secret, once');
    assert.ok((await ok(session.GET('/v1/oauth-apps'))).data.some((a) => a.id === app.data.id));
    await ok(session.DELETE('/v1/oauth-apps/{appId}', { params: { path: { appId: app.data.id } } }));
    await answered([404], session.GET('/v1/oauth/interactions/{uid}', { params: { path: { uid: 'unknown-interaction' } } }));
    await answered([404], session.POST('/v1/oauth/interactions/{uid}/consent', { params: { path: { uid: 'unknown-interaction' } }, body: { workspace_id: workspaceId } }));
    await answered([404], session.POST('/v1/oauth/interactions/{uid}/deny', { params: { path: { uid: 'unknown-interaction' } } }));
    await answered([404], session.POST('/v1/oauth/device', { body: { user_code: 'WDJB-MJHT' } }));
    await answered([404], session.POST('/v1/oauth/device/approve', { body: { user_code: 'WDJB-MJHT', workspace_id: workspaceId } }));
    await answered([404], session.POST('/v1/oauth/device/deny', { body: { user_code: 'WDJB-MJHT' } }));

    await ok(session.DELETE('/v1/account/sessions'));
    await answered([401], session.GET('/v1/account'));
  });

  it('called every operation of openapi.json, each answered as documented', async () => {
    const called = (op: { method: string; route: string }) => exchanges.some((e) => e.method === op.method && e.route === op.route);
    // People operations without a call above: called with the API key and an empty body, they answer a documented
    // refusal (401/403 for a session's operations, 422 for a sign-in step without its input) or, for the public
    // ones (the sign-in methods), their answer; checked against the document like every other answer.
    const people = operations.filter((op) => PEOPLE.test(op.route) && !called(op));
    for (const op of people) {
      const pathParams = Object.fromEntries([...op.route.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, '1']));
      const init = { params: { path: pathParams }, body: op.method === 'GET' || op.method === 'DELETE' ? undefined : {} };
      const result = await client.request(op.method.toLowerCase() as 'get', op.route as keyof paths as never, init as never);
      assert.ok(result.response.status < 500, `${op.method} ${op.route}: ${result.response.status}`);
      if (SESSION_ONLY.test(op.route) && !PUBLIC_PEOPLE.test(op.route)) assert.ok([401, 403].includes(result.response.status), `${op.method} ${op.route} with an API key: ${result.response.status}`);
    }

    const missing = operations.filter((op) => !called(op)).map((op) => `${op.method} ${op.route} (${op.operationId})`);
    assert.deepEqual(missing, [], 'operations without a call through the client: add one to this test');
    const problems = exchanges.filter((e) => e.problem).map((e) => `${e.method} ${e.route}: ${e.problem}`);
    assert.deepEqual(problems, []);
    assert.ok(exchanges.length >= operations.length);
  });
});
