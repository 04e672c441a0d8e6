/**
 * Logo replacement is atomic: concurrent updates never leave the brand
 * pointing at a deleted file, and leave no file behind that no brand uses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startService, type TestService } from '../helpers.ts';
import { logoPng, sendBrand } from './brand-helpers.ts';

describe('brand logo replacement under concurrency', () => {
  let svc: TestService;
  let ws: { id: number; key: string };

  before(async () => {
    svc = await startService({ worker: false, env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
    ws = await svc.workspace({ plan: 'company' });
  });
  after(() => svc.stop());

  it('keeps the brand on a stored file and removes every replaced one, in 25 rounds of two updates at once', async () => {
    const logos = [await logoPng(400, 100, '#e4572e'), await logoPng(400, 100, '#2e86e4')];
    const created = await sendBrand(svc, ws.key, 'POST', { company_name: 'Acme' }, { bytes: logos[0]!, name: 'a.png' });
    assert.equal(created.status, 201, created.text);
    const id = String(created.body.data.brand.id);
    for (let round = 0; round < 25; round++) {
      // Same bytes in both requests on even rounds (the case that shared a file before), different on odd ones.
      const [one, two] = await Promise.all([
        sendBrand(svc, ws.key, 'PUT', { id, company_name: 'Acme' }, { bytes: logos[0]!, name: 'a.png' }),
        sendBrand(svc, ws.key, 'PUT', { id, company_name: 'Acme' }, { bytes: logos[round % 2]!, name: 'b.png' }),
      ]);
      assert.equal(one.status, 200, one.text);
      assert.equal(two.status, 200, two.text);
      const brand = (await svc.request('GET', '/v1/brand', { key: ws.key })).body.data.brand;
      const image = await fetch(brand.logo);
      assert.equal(image.status, 200, `round ${round}: the brand points at ${brand.logo}, which is gone`);
      await image.arrayBuffer();
      const files = await svc.runtime.storage.list(`brands/${ws.id}/`);
      assert.deepEqual(files.map((key) => key.split('/').pop()), [brand.logo.split('/').pop()], `round ${round}: only the logo in use is kept`);
    }
  });
});
