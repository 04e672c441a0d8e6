/**
 * Webhooks in Chromium: an admin creates a subscription limited to a book,
 * sending to a real receiver on 127.0.0.1 (a refusal first, in words beside
 * the field), copies the signing secret shown once, sends a test event of the
 * type chosen that arrives signed and shows as delivered in the log with its
 * body and attempt log, filters the log by status and event type, redelivers it, rotates the secret, disables and enables the subscription and deletes
 * it after a confirmation. An owner limits a subscription to a tracked
 * link, then edits its name, address, events, filters and body format (a
 * refusal in words first; focus back on "Edit" after saving), and pages its
 * log past the newest 50, redelivering from the older page. An editor sees no webhook controls. Axe at 1280
 * and 360 px.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers.ts';
import { startReceiver, verify, type Receiver } from '../webhooks/receiver.ts';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('webhooks in the application', { skip: WEB_SKIP }, () => {
  // The worker sends deliveries; plain http to 127.0.0.1 is allowed for the local receiver only.
  const suite = webSuite({ workspace: { name: 'Hooks' }, book: { name: 'Spring catalogue' }, env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, worker: true });
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  it('creates a subscription, shows its secret once, delivers a test event to the receiver and logs it', async () => {
    await suite.signedIn('admin@example.com', 'admin', async (tab) => {
      const { page, context } = tab;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.svc.origin });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
      await heading(page, 'Webhooks');
      await page.getByText('No subscriptions yet.').waitFor();
      await page.getByRole('checkbox', { name: 'Link clicked' }).waitFor();
      await assertAccessible(page, 'Webhooks, empty');

      // A private address is refused, in words beside the field; what was typed stays.
      await page.getByLabel('Name').fill('CRM');
      await page.getByLabel('Endpoint URL').fill('http://10.0.0.1/hooks');
      await page.getByRole('checkbox', { name: 'Flipbook created' }).check();
      await page.getByRole('button', { name: 'Create subscription' }).click();
      await page.getByRole('alert').filter({ hasText: 'The subscription was not created' }).waitFor();
      assert.ok((await page.locator('.field-errors').first().innerText()).length > 0);
      assert.equal(await page.getByLabel('Name').inputValue(), 'CRM');
      await assertAccessible(page, 'Webhooks, a refusal');

      await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks`);
      await page.getByRole('group', { name: 'Only for these books (optional)' }).getByRole('checkbox', { name: 'Spring catalogue' }).check();
      await page.getByRole('button', { name: 'Create subscription' }).click();
      await page.getByRole('heading', { name: 'The signing secret of “CRM”' }).waitFor();
      const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      assert.match(secret, /^whsec_/);
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await page.getByText('Copied.').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      await assertAccessible(page, 'Webhooks, the secret shown');
      await page.getByRole('button', { name: 'Done' }).click();
      assert.equal(await page.getByRole('textbox', { name: 'Signing secret' }).count(), 0);

      const list = page.getByRole('list', { name: 'Subscriptions' });
      await list.getByRole('heading', { name: 'CRM' }).waitFor();
      await list.getByText(`${receiver.url}/hooks`).waitFor();
      await list.getByText('Active').waitFor();
      await list.getByText('Spring catalogue').waitFor();

      // A test event of the type chosen: it reaches the receiver, signed with the secret shown, and the log says so.
      const testType = page.getByRole('combobox', { name: 'Test event for CRM' });
      assert.equal(await testType.inputValue(), 'flipbook.created');
      await testType.selectOption({ label: 'Link clicked' });
      await page.getByRole('button', { name: 'Send test event to CRM' }).click();
      await page.getByRole('heading', { name: 'Delivery log: CRM' }).waitFor();
      const request = await eventually(async () => receiver.received.find((r) => r.path === '/hooks'), { timeoutMs: 30_000 });
      const payload = verify(secret, request) as { type: string };
      assert.equal(payload.type, 'link_clicked');
      const eventId = request.headers['webhook-id']!;
      assert.match(eventId, /^evt_test_/);
      const log = page.getByRole('table', { name: 'Deliveries to CRM, newest first' });
      const row = log.getByRole('row').filter({ hasText: eventId }).first();
      await row.getByRole('cell', { name: 'Delivered' }).waitFor({ timeout: 20_000 });
      await row.getByRole('cell', { name: 'HTTP 200' }).waitFor();
      await page.getByRole('button', { name: `Details of ${eventId}` }).click();
      assert.match(await page.getByRole('region', { name: `Body sent for ${eventId}` }).innerText(), /link_clicked/);
      assert.equal((await page.getByRole('region', { name: `Answer received for ${eventId}` }).innerText()).trim(), 'ok');
      // Every attempt, from GET …/deliveries/{delivery}.
      const attempts = page.getByRole('table', { name: `Attempts to deliver ${eventId}` });
      const first = attempts.getByRole('row').filter({ has: page.getByRole('rowheader', { name: '1', exact: true }) });
      await first.getByRole('cell', { name: 'Delivered' }).waitFor();
      await first.getByRole('cell', { name: 'HTTP 200' }).waitFor();
      await assertAccessible(page, 'Webhooks, the delivery log');

      // Filtered by status: no failed delivery; every status again shows it.
      const show = page.getByRole('combobox', { name: 'Show deliveries' });
      await show.selectOption({ label: 'Failed' });
      await page.getByText('No deliveries with the status “failed”.').waitFor();
      assert.equal(await log.count(), 0);
      await show.selectOption({ label: 'Delivered' });
      await row.getByRole('cell', { name: 'Delivered' }).waitFor();
      await show.selectOption({ label: 'Every status' });
      await row.waitFor();
      // And by event type.
      const type = page.getByRole('combobox', { name: 'Event type' });
      await type.selectOption({ label: 'Flipbook created' });
      await page.getByText('No deliveries of the event type “Flipbook created”.').waitFor();
      await type.selectOption({ label: 'Link clicked' });
      await row.getByRole('cell', { name: 'Delivered' }).waitFor();
      await type.selectOption({ label: 'Every event type' });
      await row.waitFor();

      // Redelivered: the same webhook-id arrives again.
      await page.getByRole('button', { name: `Redeliver ${eventId}` }).click();
      await eventually(async () => (receiver.of(eventId).length >= 2 ? true : undefined), { timeoutMs: 30_000 });

      // A rotated secret is shown once, and differs.
      await page.getByRole('button', { name: 'Rotate secret of CRM' }).click();
      await page.getByRole('heading', { name: 'The new signing secret of “CRM”' }).waitFor();
      const rotated = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      await page.getByRole('button', { name: 'Done' }).click();

      // Disabled and enabled again.
      await page.getByRole('button', { name: 'Disable CRM' }).click();
      await list.getByText('Disabled').waitFor();
      const refused = receiver.received.length;
      await page.getByRole('button', { name: 'Enable CRM' }).click();
      await list.getByText('Active').waitFor();
      assert.equal(receiver.received.length, refused);

      // Deleted after a confirmation, by keyboard.
      await page.getByRole('button', { name: 'Delete CRM' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete “CRM”?' });
      await dialog.waitFor();
      await assertAccessible(page, 'Webhooks, delete dialog');
      await dialog.getByRole('button', { name: 'Delete subscription' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('No subscriptions yet.').waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Delivery log: CRM' }).count(), 0);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('limits a subscription to a tracked link, then changes its name, address, events and filters', async () => {
    const link = await suite.svc.request('POST', `/v1/books/${suite.bookId}/tracked-links`, { key: suite.key, body: { name: 'Newsletter', slug: 'newsletter' } });
    assert.equal(link.status, 201);
    await suite.signedIn('owner@example.com', 'owner', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/webhooks', 'Webhooks');
      const create = page.getByRole('region', { name: 'Add a subscription' });
      await create.getByLabel('Name').fill('Clicks');
      await create.getByLabel('Endpoint URL').fill(`${receiver.url}/clicks`);
      await create.getByRole('checkbox', { name: 'Link clicked' }).check();
      await create.getByRole('group', { name: 'Only for these tracked links (optional)' }).getByRole('checkbox', { name: 'Newsletter (Spring catalogue)' }).check();
      await assertAccessible(page, 'Webhooks, a tracked link chosen');
      await create.getByRole('button', { name: 'Create subscription' }).click();
      await page.getByRole('heading', { name: 'The signing secret of “Clicks”' }).waitFor();
      await page.getByRole('button', { name: 'Done' }).click();
      const list = page.getByRole('list', { name: 'Subscriptions' });
      const item = list.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Clicks' }) });
      await item.getByText('Newsletter').waitFor();
      const [created] = (await suite.svc.request('GET', '/v1/webhook-subscriptions', { key: suite.key })).body.data.filter((x: { name: string }) => x.name === 'Clicks');
      assert.deepEqual(created.filters.map((f: { type: string; value: string; book_id?: string }) => [f.type, f.value, f.book_id]), [['tracked_link', 'newsletter', suite.bookId]]);

      // Edit: a refusal in words, then the new name, address, events and filters saved with PUT.
      await page.getByRole('button', { name: 'Edit Clicks' }).click();
      const edit = page.getByRole('region', { name: 'Edit “Clicks”' });
      await edit.waitFor();
      assert.equal(await edit.getByLabel('Name').inputValue(), 'Clicks');
      assert.equal(await edit.getByRole('checkbox', { name: 'Newsletter (Spring catalogue)' }).isChecked(), true);
      assert.equal(await edit.getByRole('checkbox', { name: 'Link clicked' }).isChecked(), true);
      await edit.getByLabel('Endpoint URL').fill('http://10.0.0.1/hooks');
      await edit.getByRole('button', { name: 'Save subscription' }).click();
      await edit.getByRole('alert').filter({ hasText: 'The subscription was not saved' }).waitFor();
      assert.equal(await edit.getByLabel('Endpoint URL').getAttribute('aria-invalid'), 'true');
      await assertAccessible(page, 'Webhooks, editing, a refusal');
      await edit.getByLabel('Name').fill('Clicks and leads');
      await edit.getByLabel('Endpoint URL').fill(`${receiver.url}/clicks-and-leads`);
      await edit.getByRole('checkbox', { name: 'Flipbook created' }).check();
      await edit.getByRole('checkbox', { name: 'Newsletter (Spring catalogue)' }).uncheck();
      await edit.getByRole('group', { name: 'Only for these books (optional)' }).getByRole('checkbox', { name: 'Spring catalogue' }).check();
      await edit.getByRole('combobox', { name: 'Body format' }).selectOption({ label: 'Slack incoming webhook' });
      await edit.getByRole('button', { name: 'Save subscription' }).click();
      await page.getByText('The subscription “Clicks and leads” was saved.').waitFor();
      await page.getByRole('region', { name: /^Edit/ }).waitFor({ state: 'detached' });
      // Focus is back on the subscription's "Edit" button.
      await page.getByRole('button', { name: 'Edit Clicks and leads' }).waitFor();
      await page.waitForFunction(() => document.activeElement?.textContent === 'Edit Clicks and leads');
      const saved = list.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Clicks and leads' }) });
      await saved.getByText(`${receiver.url}/clicks-and-leads`).waitFor();
      const after = (await suite.svc.request('GET', `/v1/webhook-subscriptions/${created.id}`, { key: suite.key })).body.data;
      assert.equal(after.name, 'Clicks and leads');
      assert.equal(after.target_url, `${receiver.url}/clicks-and-leads`);
      assert.deepEqual(after.event_types.map((e: { value: string }) => e.value).sort(), ['flipbook.created', 'link_clicked']);
      assert.deepEqual(after.filters.map((f: { type: string; value: string }) => [f.type, f.value]), [['book', suite.bookId]]);
      assert.equal(after.provider, 'slack');
      await saved.getByText('Slack incoming webhook').waitFor();

      // The log shows its newest 50, then the older ones on demand.
      for (let i = 0; i < 53; i++) {
        const sent = await suite.svc.request('POST', `/v1/webhook-subscriptions/${created.id}/test`, { key: suite.key });
        assert.equal(sent.status, 202);
      }
      await page.getByRole('button', { name: 'Delivery log of Clicks and leads' }).click();
      const log = page.getByRole('table', { name: 'Deliveries to Clicks and leads, newest first' });
      await eventually(async () => ((await log.getByRole('row').count()) === 51 ? true : undefined));
      await page.getByRole('button', { name: 'Show older deliveries' }).click();
      await eventually(async () => ((await log.getByRole('row').count()) === 54 ? true : undefined));
      await page.getByRole('button', { name: 'Show older deliveries' }).waitFor({ state: 'detached' });
      const ids = await log.locator('tbody th code').allInnerTexts();
      assert.equal(new Set(ids).size, 53);
      // A delivery of the older page redelivered: that row is followed until delivered again.
      const oldest = ids.at(-1)!;
      await eventually(async () => (receiver.of(oldest).length >= 1 ? true : undefined), { timeoutMs: 30_000 });
      const oldestRow = log.getByRole('row').filter({ hasText: oldest }).first();
      await oldestRow.getByRole('cell', { name: 'Delivered' }).waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: `Redeliver ${oldest}` }).click();
      await eventually(async () => (receiver.of(oldest).length >= 2 ? true : undefined), { timeoutMs: 30_000 });
      await oldestRow.getByRole('cell', { name: '2', exact: true }).waitFor({ timeout: 20_000 });
      await oldestRow.getByRole('cell', { name: 'Delivered' }).waitFor();
      await assertAccessible(page, 'Webhooks, the delivery log paged');
      assert.deepEqual(tab.problems, []);
    });
  });

  it('gives an editor no webhook controls', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/webhooks', 'Webhooks');
      await page.getByText('Only admins and owners of the workspace see and manage its webhooks.', { exact: false }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create subscription' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0);
      await assertAccessible(page, 'Webhooks, an editor');
    });
  });
});
