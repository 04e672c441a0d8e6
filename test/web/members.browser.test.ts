/**
 * Settings → Members in Chromium: an admin invites someone by e-mail, the
 * invitee accepts from the mailed link in a second browser context and sees
 * the workspace; the admin changes a role and removes a member (confirmed);
 * resend and revoke; a viewer sees the list read-only with no invitation
 * controls, and no key controls on API keys. Every screen passes axe at
 * 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mailedLink } from '../people/people-helpers.ts';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('members and invitations in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Acme Publishing' } });

  it('lets an admin invite someone who accepts in another browser and sees the workspace', async () => {
    await suite.signedIn('admin@example.com', 'admin', (admin) => suite.inTab(async (invitee) => {
      const { page } = admin;
      await page.getByRole('link', { name: 'Members' }).click();
      await heading(page, 'Members');
      await page.getByRole('cell', { name: /^admin@example\.com/ }).waitFor();
      await page.getByText('No invitations are waiting to be accepted.').waitFor();
      await assertAccessible(page, 'members (admin)');

      // An admin offers roles up to admin, not owner.
      const role = page.getByRole('combobox', { name: 'Role', exact: true });
      assert.deepEqual(await role.locator('option').allTextContents(), ['Viewer', 'Editor', 'Admin']);
      // A refused invitation keeps what was typed and says why.
      await page.getByLabel('E-mail address').fill('not-an-address');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByRole('alert').filter({ hasText: 'The invitation was not sent' }).waitFor();
      assert.equal(await page.getByLabel('E-mail address').inputValue(), 'not-an-address');
      await assertAccessible(page, 'invitation refused');

      await page.getByLabel('E-mail address').fill('new.editor@example.com');
      await role.selectOption('editor');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByRole('status').filter({ hasText: 'Invitation sent to new.editor@example.com.' }).waitFor();
      const pending = page.getByRole('list', { name: 'Pending invitations' });
      await pending.getByText('new.editor@example.com', { exact: true }).waitFor();
      assert.match(await pending.textContent() ?? '', /Editor · invited .* by admin@example\.com/);
      await assertAccessible(page, 'members with a pending invitation');

      // Resend: the first link stops working, the new one is used.
      const first = await mailedLink(suite.svc, 'new.editor@example.com', 'invitations/accept');
      await page.getByRole('button', { name: 'Resend invitation to new.editor@example.com' }).click();
      await page.getByRole('status').filter({ hasText: /A new invitation was sent/ }).waitFor();
      const link = await mailedLink(suite.svc, 'new.editor@example.com', 'invitations/accept');
      assert.notEqual(link, first);

      const other = invitee.page;
      await other.goto(first);
      await heading(other, 'Accept invitation');
      await other.getByRole('button', { name: 'Accept invitation' }).click();
      await other.getByRole('alert').filter({ hasText: 'The invitation was not accepted' }).waitFor();
      await assertAccessible(other, 'invitation link no longer valid');

      await other.goto(link);
      await heading(other, 'Accept invitation');
      await assertAccessible(other, 'accept invitation');
      await other.getByRole('button', { name: 'Accept invitation' }).click();
      await heading(other, 'Home');
      assert.match(await other.getByRole('main').textContent() ?? '', /You are an editor in the workspace Acme Publishing/);
      assert.equal(await other.getByLabel('Workspace').inputValue(), String(suite.workspaceId));

      // The admin sees the new member (after a reload of the list) and no pending invitation.
      await page.reload();
      await heading(page, 'Members');
      await page.getByRole('cell', { name: 'new.editor@example.com', exact: true }).waitFor();
      await page.getByText('No invitations are waiting to be accepted.').waitFor();

      // Role change: viewer, saved.
      const select = page.getByRole('combobox', { name: 'Role new.editor@example.com' });
      await select.selectOption('viewer');
      await page.getByRole('button', { name: 'Save role of new.editor@example.com' }).click();
      await page.getByRole('status').filter({ hasText: 'new.editor@example.com is now a viewer.' }).waitFor();
      await other.reload();
      await heading(other, 'Home');
      assert.match(await other.getByRole('main').textContent() ?? '', /You are a viewer in the workspace Acme Publishing/);

      // Remove, confirmed: the member's session no longer reaches the workspace.
      await page.getByRole('button', { name: 'Remove new.editor@example.com' }).click();
      const dialog = page.getByRole('dialog', { name: 'Remove new.editor@example.com?' });
      await dialog.waitFor();
      await assertAccessible(page, 'remove member dialog');
      await dialog.getByRole('button', { name: 'Remove member' }).click();
      await page.getByRole('status').filter({ hasText: 'new.editor@example.com was removed from Acme Publishing.' }).waitFor();
      await page.getByRole('cell', { name: 'new.editor@example.com', exact: true }).waitFor({ state: 'detached' });
      assert.deepEqual([...admin.problems, ...invitee.problems], []);
    }));
  });

  it('revokes a pending invitation', async () => {
    await suite.signedIn('owner@example.com', 'owner', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/settings/members', 'Members');
      // An owner may make owners.
      assert.deepEqual(await page.getByRole('combobox', { name: 'Role', exact: true }).locator('option').allTextContents(), ['Viewer', 'Editor', 'Admin', 'Owner']);
      await page.getByLabel('E-mail address').fill('maybe@example.com');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      const pending = page.getByRole('list', { name: 'Pending invitations' });
      await pending.getByText('maybe@example.com', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Revoke invitation to maybe@example.com' }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke the invitation to maybe@example.com?' });
      await dialog.getByRole('button', { name: 'Revoke invitation' }).click();
      await page.getByRole('status').filter({ hasText: 'The invitation to maybe@example.com was revoked.' }).waitFor();
      await page.getByText('No invitations are waiting to be accepted.').waitFor();
      const link = await mailedLink(suite.svc, 'maybe@example.com', 'invitations/accept');
      const accepted = await suite.svc.request('POST', '/v1/invitations/accept', { body: { token: new URL(link).searchParams.get('token') } });
      assert.ok(accepted.status >= 400, `a revoked invitation is refused (${accepted.status})`);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('shows a viewer the members read-only and no invitation or key controls', async () => {
    await suite.signedIn('viewer@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await page.getByRole('link', { name: 'Members' }).click();
      await heading(page, 'Members');
      await page.getByRole('cell', { name: /^viewer@example\.com/ }).waitFor();
      await page.getByRole('cell', { name: /^admin@example\.com/ }).waitFor();
      assert.equal(await page.getByRole('main').getByRole('combobox').count(), 0, 'no role to change');
      assert.equal(await page.getByRole('main').getByRole('button', { name: /^(Remove|Save role|Send invitation|Resend|Revoke)/ }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Leave workspace' }).count(), 1, 'but one may leave');
      assert.equal(await page.getByLabel('E-mail address').count(), 0);
      await assertAccessible(page, 'members (viewer)');

      await page.getByRole('link', { name: 'API keys' }).click();
      await heading(page, 'API keys');
      await page.getByText('Only admins and owners of the workspace manage its API keys.').waitFor();
      assert.equal(await page.getByRole('main').getByRole('button').count(), 0);
      assert.equal(await page.getByRole('main').getByRole('textbox').count(), 0);
      await assertAccessible(page, 'API keys (viewer)');

      // Leaving: confirmed, and the workspace is gone from the account.
      await page.getByRole('link', { name: 'Members' }).click();
      await page.getByRole('button', { name: 'Leave workspace' }).click();
      await page.getByRole('dialog', { name: 'Leave Acme Publishing?' }).getByRole('button', { name: 'Leave workspace' }).click();
      // Leaving keeps the person signed in, now in no workspace.
      await page.getByRole('status').filter({ hasText: 'You left Acme Publishing.' }).waitFor();
      await page.getByText('You are not a member of any workspace yet.').waitFor();
      await assertAccessible(page, 'home without a workspace');
      assert.deepEqual(tab.problems, []);
    });
  });
});
