/**
 * Settings → API keys in Chromium: a key made in the screen works against
 * GET /v1/me; rotated with no overlap, the old key is refused and the new one
 * works; revoked, it is refused. The plain key is shown once in a field
 * labelled "API key" with "Copy". A refused form keeps what was typed. An
 * admin is offered only the scopes of the admin role. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('API keys in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Acme Publishing' } });

  const me = async (key: string) => (await fetch(`${suite.svc.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status;

  async function shownKey(page: Page): Promise<string> {
    const field = page.getByRole('textbox', { name: 'API key', exact: true });
    await field.waitFor();
    assert.equal(await field.getAttribute('readonly'), '');
    await page.getByText('it will not be shown again').waitFor();
    return field.inputValue();
  }

  it('creates a key that works, rotates it with no overlap, and revokes it', async () => {
    await suite.signedIn('owner@example.com', 'owner', async (tab) => {
      const { page, context } = tab;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.svc.origin });
      await page.getByRole('link', { name: 'API keys' }).click();
      await heading(page, 'API keys');
      // The workspace's first key, made by the operator (suite.svc.workspace()).
      await page.getByRole('list', { name: 'API keys' }).getByText('An operator').waitFor();
      await assertAccessible(page, 'API keys');

      // An owner may make an all-scope key; 15 scopes and "All scopes (*)".
      const scopes = page.getByRole('group', { name: 'Scopes' });
      assert.equal(await scopes.getByRole('checkbox').count(), 16);
      await scopes.getByRole('checkbox', { name: 'All scopes (*)' }).waitFor();

      // Refused without a name: what was chosen stays.
      await scopes.getByRole('checkbox', { name: 'books:read', exact: true }).check();
      await page.getByLabel('Mode').selectOption('test');
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.getByRole('alert').filter({ hasText: 'The key was not created' }).waitFor();
      assert.ok(await scopes.getByRole('checkbox', { name: 'books:read', exact: true }).isChecked());
      assert.equal(await page.getByLabel('Mode').inputValue(), 'test');
      await assertAccessible(page, 'key refused');

      await page.getByLabel('Mode').selectOption('live');
      await page.getByLabel('Name', { exact: true }).fill('CI uploads');
      await page.getByRole('button', { name: 'Create API key' }).click();
      const first = await shownKey(page);
      assert.match(first, /^wsk_/);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied.').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), first);
      await assertAccessible(page, 'new key shown');
      assert.equal(await me(first), 200);

      const list = page.getByRole('list', { name: 'API keys' });
      await list.getByRole('heading', { name: 'CI uploads' }).waitFor();
      const listed = await list.textContent() ?? '';
      assert.match(listed, /books:read/);
      assert.match(listed, /owner@example\.com/);
      assert.ok(!listed.includes(first), 'the list shows a prefix, never the key');

      // Rotate, no overlap.
      await page.getByRole('button', { name: 'Done' }).click();
      // Escape closes the dialog and gives focus back to the button that opened it.
      const rotate = page.getByRole('button', { name: 'Rotate key CI uploads' });
      await rotate.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Rotate “CI uploads”' });
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      // Wait for the state asserted: the focus comes back as the dialog unmounts, which a loaded machine may finish after the element is gone.
      await page.waitForFunction(() => document.activeElement?.textContent === 'Rotate key CI uploads', undefined, { timeout: 5000 })
        .catch(async () => assert.fail(`focus is on ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))}, not on "Rotate key CI uploads"`));
      await page.keyboard.press('Enter');
      await dialog.waitFor();
      assert.deepEqual(await dialog.getByLabel('Keep the old key working for').locator('option').allTextContents(), ['None: the old key stops now', '1 hour', '24 hours', '3 days', '7 days']);
      await assertAccessible(page, 'rotate dialog');
      await dialog.getByLabel('Keep the old key working for').selectOption('0');
      await dialog.getByRole('button', { name: 'Rotate key' }).click();
      await dialog.waitFor({ state: 'detached' });
      const second = await shownKey(page);
      assert.notEqual(second, first);
      assert.equal(await me(first), 401, 'the old key stops at once');
      assert.equal(await me(second), 200);

      // Revoke, confirmed.
      await list.getByRole('button', { name: 'Revoke key CI uploads' }).first().click();
      const confirm = page.getByRole('dialog', { name: 'Revoke “CI uploads”?' });
      await confirm.getByRole('button', { name: 'Revoke key' }).click();
      await page.getByRole('status').filter({ hasText: 'The key “CI uploads” was revoked.' }).waitFor();
      assert.equal(await me(second), 401);
      await assertAccessible(page, 'after revoking');
      assert.deepEqual(tab.problems, []);
    });
  });

  it('offers an admin only the admin role\'s scopes', async () => {
    await suite.signedIn('admin@example.com', 'admin', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/settings/api-keys', 'API keys');
      const scopes = page.getByRole('group', { name: 'Scopes' });
      await scopes.getByRole('checkbox', { name: 'books:write', exact: true }).waitFor();
      assert.equal(await scopes.getByRole('checkbox', { name: 'All scopes (*)' }).count(), 0);
      assert.equal(await scopes.getByRole('checkbox', { name: 'workspace:write' }).count(), 0);
      assert.equal(await scopes.getByRole('checkbox').count(), 14);
      await page.getByLabel('Name', { exact: true }).fill('Webhook relay');
      await scopes.getByRole('checkbox', { name: 'webhooks:read', exact: true }).check();
      const expires = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
      await page.getByLabel('Expires').fill(expires);
      await page.getByRole('button', { name: 'Create API key' }).click();
      const key = await page.getByRole('textbox', { name: 'API key', exact: true }).inputValue();
      assert.equal(await me(key), 200);
      const item = page.getByRole('list', { name: 'API keys' }).getByRole('listitem').filter({ hasText: 'Webhook relay' });
      await item.waitFor();
      assert.doesNotMatch(await item.textContent() ?? '', /ExpiresNever/, 'the expiry is listed');
      assert.deepEqual(tab.problems, []);
    });
  });
});
