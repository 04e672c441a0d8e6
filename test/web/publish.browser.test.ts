/**
 * The publishing screens in Chromium, through the real service with its
 * worker converting: a real PDF and a real Word document chosen together on
 * Upload, each followed from its bytes to ready; a file of the wrong type
 * refused with the API's words; a password-protected PDF asking for its
 * password and then converting. Books shows them as a grid and a list, with
 * search, status filter, sort and selection. A book's page publishes it (the
 * reader appears beside the facts), renames it, lists its outline and pages,
 * and deletes it after saying what is lost. A viewer sees no write control.
 * Axe at 1280 and 360 px on every screen.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { corpus, CORPUS_SKIP } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { assertAccessible, heading, personIn, WEB_SKIP, webSuite } from './web-browser.ts';

describe('the publishing screens', { skip: WEB_SKIP || CORPUS_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Acme Publishing' }, worker: true });

  it('uploads a PDF and a Word document together, follows them to ready, lists them and publishes one', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Upload' }).click();
      await heading(page, 'Upload');
      await assertAccessible(page, 'Upload, empty');

      const chooser = page.getByLabel('Choose documents');
      await chooser.setInputFiles([
        { name: 'pdflatex-outline.pdf', mimeType: 'application/pdf', buffer: await readFile(corpus('pdflatex-outline.pdf')) },
        { name: 'Bug51170.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', buffer: await readFile(corpus('Bug51170.docx')) },
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('Not a document the service converts.\n') },
        { name: 'issue6010_1.pdf', mimeType: 'application/pdf', buffer: await readFile(corpus('issue6010_1.pdf')) },
      ]);
      const documents = page.getByRole('list', { name: 'Documents' });
      const item = (name: string) => documents.getByRole('listitem').filter({ has: page.getByRole('heading', { name }) });
      assert.equal(await documents.getByRole('listitem').count(), 4);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();

      // The wrong type: the API's refusal in words, next to the file.
      await item('notes.txt').getByRole('alert').filter({ hasText: 'notes.txt was not accepted' }).waitFor();
      // Both documents to ready, through their conversion's progress.
      for (const name of ['pdflatex-outline.pdf', 'Bug51170.docx']) {
        await item(name).getByText('Ready', { exact: true }).or(item(name).getByText(/^Ready, \d+ pages? blank$/)).waitFor({ timeout: 180_000 });
        await item(name).getByRole('link', { name: /^Open the book / }).waitFor();
      }
      // The password-protected PDF asks for its password, then converts.
      const locked = item('issue6010_1.pdf');
      await locked.getByText(/protected with a password/).waitFor({ timeout: 60_000 });
      await locked.getByLabel('Password of issue6010_1.pdf').fill('abc');
      await assertAccessible(page, 'Upload, with results');
      await locked.getByRole('button', { name: 'Convert with this password' }).click();
      await locked.getByText('Ready', { exact: true }).waitFor({ timeout: 60_000 });

      // Books: all three, as a grid, then a list; search; filter; select.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Books' }).click();
      await heading(page, 'Books');
      const grid = page.getByRole('list', { name: 'Books' });
      await grid.getByRole('link', { name: 'pdflatex-outline' }).waitFor();
      assert.equal(await grid.getByRole('listitem').count(), 3);
      await assertAccessible(page, 'Books, grid');
      await page.getByRole('radio', { name: 'List' }).check();
      const table = page.getByRole('table', { name: 'Books' });
      await table.getByRole('rowheader', { name: 'Bug51170' }).waitFor();
      assert.match(page.url(), /view=list/);
      await assertAccessible(page, 'Books, list');
      await page.getByLabel('Search by name').fill('Bug5');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('1 book shown, all of them.').waitFor();
      await page.getByRole('checkbox', { name: 'Select Bug51170' }).check();
      await page.getByText('1 book selected.').waitFor();
      await page.getByLabel('Search by name').fill('');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('3 books shown, all of them.').waitFor();
      await page.getByLabel('Sort by').selectOption('name');
      await page.waitForURL(/sort=name/);
      await page.waitForFunction(() => document.querySelectorAll('tbody th a').length === 3 && document.querySelector('tbody th a')?.textContent === 'Bug51170');
      await page.getByLabel('Status').selectOption('publish');
      await page.getByText('No books match this search.').waitFor();
      await page.getByLabel('Status').selectOption('');
      await table.getByRole('link', { name: 'pdflatex-outline' }).click();

      // The book's page: facts, outline, pages; publish shows the reader; rename; delete.
      await heading(page, 'pdflatex-outline');
      await page.getByRole('list', { name: 'Pages' }).getByText('Page 4').waitFor();
      assert.ok(await page.getByRole('region', { name: 'Outline' }).getByRole('listitem').count() >= 1);
      await assertAccessible(page, 'Book page, draft');
      await page.getByRole('button', { name: 'Publish', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'The book is published.' }).waitFor();
      const reader = page.frameLocator('iframe[title="Reader: pdflatex-outline"]');
      await reader.locator('body').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Outline sample');
      // Typed, not saved, and the page reloaded: the name typed is still there. Someone changed the description
      // meanwhile: the restored draft meets the conflict, and goes over theirs once the book is read again.
      const typedOn = page.url().split('/').pop()!;
      assert.equal((await suite.svc.request('PUT', `/v1/books/${typedOn}`, { key: suite.key, body: { status: 'publish', description: 'Theirs' } })).status, 200);
      await page.reload();
      await heading(page, 'pdflatex-outline');
      await page.getByText('Your unsaved changes from before are back in the form.').waitFor();
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Outline sample');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Someone changed this book meanwhile' }).waitFor();
      await heading(page, 'pdflatex-outline');
      await page.getByRole('button', { name: 'Read the book again' }).click();
      await page.getByRole('alert').filter({ hasText: 'Someone changed this book meanwhile' }).waitFor({ state: 'detached' });
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Outline sample');
      assert.equal(await page.getByRole('textbox', { name: 'Description' }).inputValue(), 'Theirs', 'their description, which this person did not change');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await heading(page, 'Outline sample');
      await assertAccessible(page, 'Book page, published');
      const bookId = page.url().split('/').pop()!;
      const readerPage = await fetch(`${suite.svc.url}/read/${bookId}`);
      assert.equal(readerPage.status, 200, 'published: the public reader answers');
      // Schedule and expiry are kept as typed over a refusal and a reload, until each is saved.
      await page.getByLabel('Publish on').fill('2020-01-01T10:00');
      await page.getByLabel('Expires on').fill('2099-06-01T10:00');
      await page.getByRole('button', { name: 'Schedule', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'The book was not changed' }).waitFor();
      await page.getByText('Scheduling needs a published_date in the future.').waitFor();
      await page.reload();
      await heading(page, 'Outline sample');
      await page.getByText('Your unsaved dates from before are back in the form.').waitFor();
      assert.equal(await page.getByLabel('Publish on').inputValue(), '2020-01-01T10:00');
      assert.equal(await page.getByLabel('Expires on').inputValue(), '2099-06-01T10:00');
      await assertAccessible(page, 'Book page, dates kept');
      await page.getByLabel('Publish on').fill('2099-01-01T09:00');
      await page.getByRole('button', { name: 'Schedule', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'The book will be published on' }).waitFor();
      assert.equal(await page.getByLabel('Expires on').inputValue(), '2099-06-01T10:00', 'the expiry typed and not saved yet stays');
      await page.getByRole('button', { name: 'Set expiry' }).click();
      await page.getByRole('status').filter({ hasText: 'The book expires on' }).waitFor();
      const dated = (await suite.svc.request('GET', `/v1/books/${bookId}`, { key: suite.key })).body.data;
      assert.equal(dated.status, 'schedule');
      assert.ok(dated.expires_at.startsWith('2099-06-01'));
      await page.reload();
      await heading(page, 'Outline sample');
      assert.equal(await page.getByLabel('Expires on').inputValue(), '2099-06-01T10:00');
      assert.equal(await page.getByLabel('Publish on').inputValue(), '2099-01-01T09:00');
      assert.equal(await page.getByText('Your unsaved dates from before are back in the form.').count(), 0);
      await page.getByRole('button', { name: 'Delete book' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete “Outline sample”?' });
      await confirm.getByText(/its 4 pages/).waitFor();
      await assertAccessible(page, 'Delete dialog');
      await confirm.getByRole('button', { name: 'Delete for good' }).click();
      await heading(page, 'Books');
      await page.getByText('2 books shown, all of them.').waitFor();
      assert.equal((await fetch(`${suite.svc.url}/read/${bookId}`)).status, 404);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('shows a setting in the reader before saving, saves it with the revision, and shows a conflicting change', async () => {
    await suite.signedIn('editor@example.com', null, async (tab) => {
      const { page } = tab;
      await page.goto(`${suite.svc.origin}/app/books`);
      await page.getByRole('list', { name: 'Books' }).getByRole('link', { name: 'Bug51170' }).click();
      await heading(page, 'Bug51170');
      const bookId = page.url().split('/').pop()!;
      await page.getByRole('link', { name: 'Reader settings' }).click();
      await heading(page, 'Reader settings: Bug51170');
      const preview = page.frameLocator('iframe[title="Preview: Bug51170"]');
      await preview.locator('.stage').waitFor();
      assert.equal(await preview.getByText('All rights reserved.').count(), 0);
      await assertAccessible(page, 'Reader settings');

      // Seen in the preview (a draft, not yet saved), then saved.
      await page.getByRole('checkbox', { name: 'Show the copyright line' }).check();
      await preview.getByText(/All rights reserved\./).waitFor();
      const book = async () => (await suite.svc.request('GET', `/v1/books/${bookId}`, { key: suite.key })).body.data;
      assert.equal((await book()).settings.copyright_enabled, false, 'not saved by the preview');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'The reader settings were saved.' }).waitFor();
      assert.equal((await book()).settings.copyright_enabled, true);
      await preview.getByText(/All rights reserved\./).waitFor();

      // Changed elsewhere meanwhile: shown, not overwritten; read again, the person's change goes over theirs.
      const elsewhere = await suite.svc.request('PUT', `/v1/books/${bookId}`, { key: suite.key, body: { status: 'draft', share_social_media: false } });
      assert.equal(elsewhere.status, 200);
      await page.getByRole('checkbox', { name: 'Page-turn sound' }).check();
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Someone changed these settings meanwhile' }).waitFor();
      let now = await book();
      assert.equal(now.settings.share_social_media, false);
      assert.equal(now.settings.sound_enabled, false);
      await assertAccessible(page, 'Reader settings, conflict');
      // A failed save loses nothing, not even over a reload: the draft comes back with the revision it started
      // from, and so meets the same conflict instead of overwriting the change made elsewhere.
      await page.reload();
      await heading(page, 'Reader settings: Bug51170');
      await page.getByText('Your unsaved changes from before are back in the form.').waitFor();
      assert.equal(await page.getByRole('checkbox', { name: 'Page-turn sound' }).isChecked(), true);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Someone changed these settings meanwhile' }).waitFor();
      assert.equal((await book()).settings.sound_enabled, false);
      await page.getByRole('button', { name: 'Read the book again' }).click();
      await page.getByRole('status').filter({ hasText: 'The book was read again.' }).waitFor();
      assert.equal(await page.getByRole('checkbox', { name: 'Show sharing' }).isChecked(), false);
      assert.equal(await page.getByRole('checkbox', { name: 'Page-turn sound' }).isChecked(), true);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'The reader settings were saved.' }).waitFor();
      now = await book();
      assert.equal(now.settings.share_social_media, false);
      assert.equal(now.settings.sound_enabled, true);
      // Saved: nothing is kept as a draft any more.
      await page.reload();
      await heading(page, 'Reader settings: Bug51170');
      await page.getByRole('checkbox', { name: 'Page-turn sound' }).waitFor();
      assert.equal(await page.getByText('Your unsaved changes from before are back in the form.').count(), 0);

      // The preview is for the workspace's people only.
      assert.equal((await fetch(`${suite.svc.url}/read/${bookId}/preview`)).status, 401);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('shows a viewer the books without any write control', async () => {
    await suite.signedIn('viewer@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/books', 'Books');
      const grid = page.getByRole('list', { name: 'Books' });
      await grid.getByRole('link', { name: 'Bug51170' }).click();
      await heading(page, 'Bug51170');
      await page.getByRole('list', { name: 'Pages' }).getByText('Page 1', { exact: true }).waitFor();
      for (const name of ['Publish', 'Unpublish', 'Save', 'Schedule', 'Delete book']) assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name} for a viewer`);
      await assertAccessible(page, 'Book page, viewer');
      await suite.visit(page, '/app/books', 'Books');
      await grid.getByRole('link', { name: 'Bug51170' }).waitFor();
      assert.equal(await page.getByRole('checkbox').count(), 0);
      assert.equal(await page.getByRole('link', { name: 'Upload documents' }).count(), 0);
      await suite.visit(page, '/app/upload', 'Upload');
      assert.equal(await page.getByRole('button', { name: 'Upload', exact: true }).count(), 0);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('pages through 30 books with no repeats and says which are scheduled or expired', async () => {
    const other = (await suite.svc.workspace({ name: 'Many Books' })).id;
    const hour = 3_600_000;
    for (let n = 1; n <= 30; n++) {
      const values = n === 1 ? { status: 'schedule' as const, publishedDate: new Date(Date.now() + 24 * hour) }
        : n === 2 ? { status: 'draft' as const, expiresAt: new Date(Date.now() - hour), unpublishedAt: new Date(Date.now() - hour) }
        : n === 3 ? { status: 'publish' as const, publishedDate: new Date(Date.now() - hour) } : {};
      await insertBook(suite.svc, other, { name: `Volume ${String(n).padStart(2, '0')}`, pageCount: n, ...values });
    }
    await personIn(suite.svc, other, 'reader-of-many@example.com', 'editor');
    await suite.signedIn('reader-of-many@example.com', null, async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/books?view=list&sort=name', 'Books');
      await page.getByText('24 books shown.').waitFor();
      // From the keyboard. Focusing the button scrolls it into view, which may read the next page by itself first
      // (the button is then gone, and Enter does nothing): either way the list ends with all 30.
      await page.getByRole('button', { name: 'Show more books' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('30 books shown, all of them.').waitFor();
      const names = await page.getByRole('table', { name: 'Books' }).locator('tbody th').allTextContents();
      assert.deepEqual(names, Array.from({ length: 30 }, (_, i) => `Volume ${String(i + 1).padStart(2, '0')}`));
      const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
      await row('Volume 01').getByText('Scheduled').waitFor();
      await row('Volume 02').getByText('Expired').waitFor();
      await row('Volume 03').getByText('Published').waitFor();
      await page.getByRole('checkbox', { name: 'Select all shown' }).check();
      await page.getByText('30 books selected.').waitFor();
      await assertAccessible(page, 'Books, 30 in a list');
      await page.getByLabel('Status').selectOption('schedule');
      await page.getByText('1 book shown, all of them.').waitFor();
      assert.deepEqual(tab.problems, []);
    });
  });
});
