/**
 * The workspace brand through HTTP: create (multipart, logo checked by
 * content), read, change, take-over toggle, plans and scopes, and what the
 * public reader shows while take-over is on and after it is turned off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { logoPng, sendBrand } from './brand-helpers.ts';

const env = { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 };

const FULL = {
  company_name: 'Acme Publishing',
  about_brand: 'Catalogues since 1999.',
  contact_number: '+44 20 7946 0958',
  website_url: 'https://acme.example/',
  google_analytics: 'g-ACME1234',
  primary_color: '#0B3D91',
  secondary_color: '#ffc940',
  tertiary_color: '#eee',
  twitter: 'https://x.com/acme',
  linkedin: 'https://www.linkedin.com/company/acme',
  youtube: 'https://www.youtube.com/@acme',
};

describe('brand', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ env });
  });
  after(() => svc.stop());

  it('creates, reads and changes the brand, with its relations and a logo stored as WebP', async () => {
    const ws = await svc.workspace({ plan: 'company' });
    const empty = await svc.request('GET', '/v1/brand', { key: ws.key });
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { data: { brand: null }, meta: {} });

    const created = await sendBrand(svc, ws.key, 'POST', FULL, { bytes: await logoPng(), name: 'logo.png' });
    assert.equal(created.status, 201, created.text);
    const brand = created.body.data.brand;
    assert.equal(brand.workspace_id, ws.id);
    assert.equal(brand.company_name, 'Acme Publishing');
    assert.equal(brand.google_analytics, 'G-ACME1234', 'measurement ids are upper-cased');
    assert.equal(brand.take_over_branding, false);
    assert.deepEqual(
      [brand.brand_color.brand_id, brand.brand_color.primary_color, brand.brand_color.secondary_color, brand.brand_color.tertiary_color],
      [brand.id, '#0b3d91', '#ffc940', '#eee'],
    );
    assert.equal(brand.brand_social_media.brand_id, brand.id);
    assert.equal(brand.brand_social_media.twitter, 'https://x.com/acme');
    assert.equal(brand.brand_social_media.facebook, null);
    assert.equal(brand.workspace.id, ws.id);
    assert.equal(typeof brand.workspace.slug, 'string');
    assert.equal(typeof brand.workspace.can_rename, 'boolean');
    assert.match(brand.logo, new RegExp(`/assets/brands/${ws.id}/logo-[0-9a-f]{32}\\.webp$`));

    // The logo is served like page images: immutable, WebP, fitted in 1024×512.
    const logo = await fetch(brand.logo);
    assert.equal(logo.status, 200);
    assert.equal(logo.headers.get('content-type'), 'image/webp');
    assert.match(logo.headers.get('cache-control') ?? '', /immutable/);
    const meta = await sharp(Buffer.from(await logo.arrayBuffer())).metadata();
    assert.equal(meta.format, 'webp');
    assert.deepEqual([meta.width, meta.height], [1024, 256]);

    assert.deepEqual((await svc.request('GET', '/v1/brand', { key: ws.key })).body.data.brand, brand);

    // A second POST: 409 pointing to PUT.
    const again = await sendBrand(svc, ws.key, 'POST', { company_name: 'Other' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.type, 'ConflictException');
    assert.match(again.body.error.message, /PUT \/brand/);
    assert.deepEqual(again.body.error.details.brand_id, [String(brand.id)]);

    // PUT changes what it is sent, clears what is sent empty, keeps the rest.
    const updated = await sendBrand(svc, ws.key, 'PUT', { id: String(brand.id), company_name: 'Acme Books', twitter: '', primary_color: '#123456' });
    assert.equal(updated.status, 200, updated.text);
    const changed = updated.body.data.brand;
    assert.equal(changed.company_name, 'Acme Books');
    assert.equal(changed.brand_social_media.twitter, null);
    assert.equal(changed.brand_social_media.linkedin, FULL.linkedin);
    assert.equal(changed.brand_color.primary_color, '#123456');
    assert.equal(changed.brand_color.secondary_color, '#ffc940');
    assert.equal(changed.website_url, FULL.website_url);
    assert.equal(changed.logo, brand.logo);
    assert.deepEqual(updated.body.meta, {});

    // A new file replaces the logo (new URL; the old one is gone); an empty logo field removes it.
    const replaced = await sendBrand(svc, ws.key, 'PUT', { id: String(brand.id), company_name: 'Acme Books' }, { bytes: await logoPng(300, 300, '#2e86ab'), name: 'square.jpg' });
    assert.equal(replaced.status, 200, replaced.text);
    assert.notEqual(replaced.body.data.brand.logo, brand.logo);
    assert.equal((await fetch(brand.logo)).status, 404);
    const removed = await sendBrand(svc, ws.key, 'PUT', { id: String(brand.id), company_name: 'Acme Books', logo: '' });
    assert.equal(removed.body.data.brand.logo, null);
  });

  it('validates the fields and the logo (bad URL, colors, ids, a non-image, an oversized file)', async () => {
    const ws = await svc.workspace({ plan: 'pro' });
    const png = await logoPng(200, 100);
    const cases: [Record<string, string>, { bytes: Buffer; name: string } | undefined, string][] = [
      [{}, undefined, 'company_name'],
      [{ company_name: '' }, undefined, 'company_name'],
      [{ company_name: 'x'.repeat(256) }, undefined, 'company_name'],
      [{ company_name: 'A', website_url: 'not a url' }, undefined, 'website_url'],
      [{ company_name: 'A', website_url: 'javascript:alert(1)' }, undefined, 'website_url'],
      [{ company_name: 'A', website_url: 'ftp://acme.example' }, undefined, 'website_url'],
      [{ company_name: 'A', linkedin: 'linkedin.com/acme' }, undefined, 'linkedin'],
      [{ company_name: 'A', primary_color: 'red' }, undefined, 'primary_color'],
      [{ company_name: 'A', secondary_color: '#12345' }, undefined, 'secondary_color'],
      [{ company_name: 'A', google_analytics: 'GTM-ABC123' }, undefined, 'google_analytics'],
      [{ company_name: 'A', contact_number: 'call me' }, undefined, 'contact_number'],
      [{ company_name: 'A', colour: '#fff' }, undefined, 'colour'],
      [{ company_name: 'A' }, { bytes: Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'), name: 'logo.png' }, 'file'],
      [{ company_name: 'A' }, { bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), name: 'logo.svg' }, 'file'],
      [{ company_name: 'A' }, { bytes: Buffer.concat([png, Buffer.alloc(2048 * 1024)]), name: 'huge.png' }, 'file'],
    ];
    for (const [fields, file, field] of cases) {
      const res = await sendBrand(svc, ws.key, 'POST', fields, file);
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.equal(res.body.error.type, 'ValidationException');
      assert.ok(res.body.error.details[field], `${field} in ${JSON.stringify(res.body.error.details)}`);
    }
    const oversized = await sendBrand(svc, ws.key, 'POST', { company_name: 'A' }, { bytes: Buffer.concat([png, Buffer.alloc(2048 * 1024)]), name: 'huge.png' });
    assert.deepEqual(oversized.body.error.details.file, ['The logo may not be greater than 2048 kilobytes.']);
    // Nothing was created by the refused requests; JSON is not the brand's format.
    assert.equal((await svc.request('GET', '/v1/brand', { key: ws.key })).body.data.brand, null);
    const json = await svc.request('POST', '/v1/brand', { key: ws.key, body: { company_name: 'A' } });
    assert.equal(json.status, 415);
    // A logo exactly at the limit is accepted (a valid image padded to 2048 KB).
    const atLimit = Buffer.concat([png, Buffer.alloc(2048 * 1024 - png.length)]);
    const ok = await sendBrand(svc, ws.key, 'POST', { company_name: 'A' }, { bytes: atLimit, name: 'limit.png' });
    assert.equal(ok.status, 201, ok.text);
  });

  it('answers 404 for a PUT with another id or another workspace\'s brand, and for a toggle without a brand', async () => {
    const mine = await svc.workspace();
    const theirs = await svc.workspace();
    const theirBrand = (await sendBrand(svc, theirs.key, 'POST', { company_name: 'Theirs' })).body.data.brand;
    const put = await sendBrand(svc, mine.key, 'PUT', { id: String(theirBrand.id), company_name: 'Hijack' });
    assert.equal(put.status, 404);
    assert.equal(put.body.error.type, 'ModelNotFoundException');
    assert.equal((await svc.request('POST', '/v1/toggle-take-over-branding', { key: mine.key })).status, 404);
    const mineBrand = (await sendBrand(svc, mine.key, 'POST', { company_name: 'Mine' })).body.data.brand;
    assert.equal((await sendBrand(svc, mine.key, 'PUT', { id: String(theirBrand.id), company_name: 'Hijack' })).status, 404);
    assert.equal((await sendBrand(svc, mine.key, 'PUT', { id: 'abc', company_name: 'Mine' })).status, 422);
    assert.equal((await sendBrand(svc, mine.key, 'PUT', { company_name: 'Mine' })).status, 422);
    assert.equal((await svc.request('GET', '/v1/brand', { key: theirs.key })).body.data.brand.company_name, 'Theirs');
    assert.equal(mineBrand.company_name, 'Mine');
  });

  it('needs the plans and scopes: brand on Pro and Company, take-over on Company, shown in GET /me', async () => {
    const free = await svc.workspace({ plan: 'free' });
    const pro = await svc.workspace({ plan: 'pro' });
    const res = await sendBrand(svc, free.key, 'POST', { company_name: 'Free Co' });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.type, 'PlanRestrictionException');
    assert.deepEqual(res.body.error.details.required_plan, ['pro']);
    assert.equal((await svc.request('GET', '/v1/brand', { key: free.key })).status, 200, 'reading is open to every plan');

    assert.equal((await sendBrand(svc, pro.key, 'POST', { company_name: 'Pro Co' })).status, 201);
    const toggle = await svc.request('POST', '/v1/toggle-take-over-branding', { key: pro.key });
    assert.equal(toggle.status, 403);
    assert.deepEqual(toggle.body.error.details.required_plan, ['company']);

    const me = (await svc.request('GET', '/v1/me', { key: pro.key })).body.data;
    assert.equal(me.plan.features.brand, true);
    assert.equal(me.plan.features.take_over_branding, false);
    assert.equal((await svc.request('GET', '/v1/me', { key: free.key })).body.data.plan.features.brand, false);

    const readOnly = await svc.key(pro.id, ['brand:read']);
    assert.equal((await svc.request('GET', '/v1/brand', { key: readOnly.key })).status, 200);
    const denied = await sendBrand(svc, readOnly.key, 'PUT', { id: '1', company_name: 'x' });
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body.error.details.required_scope, ['brand:write']);
    const booksOnly = await svc.key(pro.id, ['books:read']);
    assert.equal((await svc.request('GET', '/v1/brand', { key: booksOnly.key })).status, 403);
  });

  it('take-over shows the brand on every public flipbook of the workspace, and turning it off restores the default at once', async () => {
    const ws = await svc.workspace({ plan: 'company' });
    const other = await svc.workspace({ plan: 'company' });
    const book = await insertBook(svc, ws.id, { name: 'Branded book', status: 'publish', publishedDate: new Date() });
    const second = await insertBook(svc, ws.id, { name: 'Second book', status: 'publish', publishedDate: new Date() });
    const foreign = await insertBook(svc, other.id, { name: 'Foreign book', status: 'publish', publishedDate: new Date() });
    const created = await sendBrand(svc, ws.key, 'POST', FULL, { bytes: await logoPng(), name: 'logo.png' });
    const logoUrl = created.body.data.brand.logo as string;
    const read = async (randomId: string) => {
      const res = await fetch(`${svc.url}/read/${randomId}`);
      assert.equal(res.status, 200);
      return { html: await res.text(), csp: res.headers.get('content-security-policy') ?? '', cache: res.headers.get('cache-control') };
    };

    // Off (the default): the service's own look, no analytics.
    let page = await read(book.randomId);
    assert.match(page.html, /Made with <strong>Flipbook<\/strong>/);
    assert.ok(!page.html.includes('brand-mark') && !page.html.includes('googletagmanager'));
    assert.ok(!page.csp.includes('googletagmanager'));
    assert.match(page.csp, /script-src 'self';/);

    const on = await svc.request('POST', '/v1/toggle-take-over-branding', { key: ws.key });
    assert.equal(on.status, 200);
    assert.equal(on.body.data.brand.take_over_branding, true);
    for (const id of [book.randomId, second.randomId]) {
      page = await read(id);
      assert.equal(page.cache, 'private, no-cache');
      assert.ok(!page.html.includes('Made with'), 'no badge');
      assert.ok(page.html.includes('<body class="branded">'));
      assert.ok(page.html.includes(`<a class="brand-mark" href="https://acme.example/"`), 'logo linked to the website');
      assert.ok(page.html.includes(`<img src="${logoUrl}" alt="Acme Publishing"`));
      assert.ok(page.html.includes('--brand-bar:#0b3d91;--brand-bar-fg:#ffffff'), 'bar colors with a readable text color');
      assert.ok(page.html.includes('--brand-accent:#ffc940;--brand-accent-fg:#111111'));
      assert.ok(page.html.includes('--brand-stage:#eee'));
      assert.ok(page.html.includes('href="https://x.com/acme"') && page.html.includes('aria-label="Acme Publishing on LinkedIn (opens in a new tab)"'));
      assert.ok(!page.html.includes('data-network="facebook"'), 'only the profiles that are set');
      assert.match(page.html, /<script async src="https:\/\/www\.googletagmanager\.com\/gtag\/js\?id=G-ACME1234" nonce="([^"]+)"><\/script>/);
      const nonce = /nonce="([^"]+)"/.exec(page.html)![1]!;
      assert.ok(page.csp.includes(`script-src 'self' 'nonce-${nonce}' https://www.googletagmanager.com`), page.csp);
      assert.match(page.csp, /connect-src 'self' https:\/\/\*\.google-analytics\.com/);
      assert.match(page.html, /<meta property="og:site_name" content="Acme Publishing">/);
    }
    // Another workspace's books are untouched.
    assert.match((await read(foreign.randomId)).html, /Made with <strong>Flipbook<\/strong>/);

    // Without a measurement id no analytics and no extra CSP sources.
    const id = String(created.body.data.brand.id);
    await sendBrand(svc, ws.key, 'PUT', { id, company_name: 'Acme Publishing', google_analytics: '' });
    page = await read(book.randomId);
    assert.ok(page.html.includes('brand-mark') && !page.html.includes('googletagmanager') && !page.csp.includes('google'));

    const off = await svc.request('POST', '/v1/toggle-take-over-branding', { key: ws.key });
    assert.equal(off.body.data.brand.take_over_branding, false);
    page = await read(book.randomId);
    assert.match(page.html, /Made with <strong>Flipbook<\/strong>/);
    assert.ok(!page.html.includes('brand-mark') && !page.html.includes('--brand-'));

    // A workspace that moves below Company keeps its brand record, but take-over stops showing.
    assert.equal((await svc.request('POST', '/v1/toggle-take-over-branding', { key: ws.key })).body.data.brand.take_over_branding, true);
    assert.ok((await read(book.randomId)).html.includes('brand-mark'));
    await svc.runtime.services.workspaces.setPlan(ws.id, 'pro');
    assert.match((await read(book.randomId)).html, /Made with <strong>Flipbook<\/strong>/);
    assert.equal((await svc.request('GET', '/v1/brand', { key: ws.key })).body.data.brand.take_over_branding, true);
  });
});
