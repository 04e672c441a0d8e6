/**
 * The tools an assistant gets: what a person asks about their flipbooks.
 * Each tool is described for a model, takes a small input, and answers with
 * short text (plus the structured data where a follow-up call needs ids).
 * Every tool works through the API with the caller's token (api-caller.ts):
 * a missing scope comes back as the API's 403, naming the scope.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { ApiRefusal, expectOk, type ApiCall } from './api-caller.ts';

export interface ToolDependencies {
  call: ApiCall;
  /** Fetches a document through the SSRF-safe outbound client. */
  download: (url: string) => Promise<{ bytes: Buffer; filename: string; contentType: string }>;
  /** Longest a tool waits for a conversion before answering with its progress. */
  maxWaitMs: number;
}

type ToolResult = { content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
type Progress = (progress: number, total: number | undefined, message: string) => Promise<void>;

const BookId = z.string().min(1).max(64).describe('The book\'s id (`random_id`), as find_books returns it.');
const Range = z.string().max(32).optional()
  .describe('Days to cover: `today`, `7d`, `30d`, `90d`, `12mo`, `all` (default) or `YYYY-MM-DD,YYYY-MM-DD`.');

function text(body: string, structured?: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: body }], ...(structured ? { structuredContent: structured } : {}) };
}

/** Runs a tool; a refusal of the API becomes a tool error in the API's words (the scope it needs, a missing book). */
async function run(work: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiRefusal) return { content: [{ type: 'text', text: error.message }], isError: true };
    throw error;
  }
}

interface Book {
  random_id: string; name: string; description: string | null; status: string | null; page_count: number;
  page_images_status: string; preview_url: string | null; embed_code: string | null; created_at: string | null; updated_at: string | null;
  published_date: string | null; expires_at: string | null;
}

function bookLine(b: Book): string {
  return `- ${b.name} (id ${b.random_id}): ${b.status ?? 'draft'}, ${b.page_count} pages${b.page_images_status !== 'ready' ? `, conversion ${b.page_images_status}` : ''}${b.preview_url ? `, ${b.preview_url}` : ''}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function registerTools(server: McpServer, deps: ToolDependencies): void {
  const { call } = deps;
  const getBook = async (id: string): Promise<Book> => expectOk(await call('GET', `/v1/books/${encodeURIComponent(id)}`)).data;

  server.registerTool('find_books', {
    title: 'Find books',
    description: 'Lists the workspace\'s flipbooks, newest first, optionally those whose name contains a text or with one status. Use it to find a book\'s id for the other tools.',
    inputSchema: {
      name: z.string().max(255).optional().describe('Part of the book\'s name.'),
      status: z.enum(['publish', 'draft', 'schedule']).optional().describe('`publish` (public), `draft` or `schedule`.'),
      limit: z.number().int().min(1).max(100).optional().describe('How many, 1-100 (default 20).'),
    },
  }, ({ name, status, limit }) => run(async () => {
    const query = new URLSearchParams({ sort: '-created_at', limit: String(limit ?? 20) });
    if (name) query.set('filter[name]', name);
    if (status) query.set('filter[status]', status);
    const page = expectOk(await call('GET', `/v1/books?${query}`));
    const books = page.data as Book[];
    if (books.length === 0) return text('No books match.', { books: [] });
    const more = page.meta?.has_more ? '\n(More match: narrow the name or raise the limit.)' : '';
    return text(`${books.length} book(s):\n${books.map(bookLine).join('\n')}${more}`, { books: books.map((b) => ({ id: b.random_id, name: b.name, status: b.status, page_count: b.page_count })) });
  }));

  server.registerTool('describe_book', {
    title: 'Describe a book',
    description: 'A book\'s facts: name, description, status, pages, conversion state, dates, its public address and its table of contents.',
    inputSchema: { book_id: BookId },
  }, ({ book_id }) => run(async () => {
    const book = await getBook(book_id);
    const outline = await call('GET', `/v1/books/${encodeURIComponent(book_id)}/outline`);
    const entries = outline.status === 200 ? flattenOutline(outline.body.data) : [];
    const lines = [
      `${book.name} (id ${book.random_id})`,
      book.description ? `Description: ${book.description}` : null,
      `Status: ${book.status ?? 'draft'}${book.published_date ? `, published ${book.published_date}` : ''}${book.expires_at ? `, expires ${book.expires_at}` : ''}`,
      `Pages: ${book.page_count} (conversion ${book.page_images_status})`,
      book.preview_url ? `Reader: ${book.preview_url}` : null,
      `Created ${book.created_at}, updated ${book.updated_at}`,
      entries.length ? `Contents:\n${entries.slice(0, 40).map((e) => `${'  '.repeat(e.depth)}- ${e.title}${e.page ? ` (p. ${e.page})` : ''}`).join('\n')}` : 'Contents: none in the document.',
    ];
    return text(lines.filter(Boolean).join('\n'), { book: { id: book.random_id, name: book.name, status: book.status, page_count: book.page_count, preview_url: book.preview_url } });
  }));

  server.registerTool('upload_document_from_url', {
    title: 'Upload a document from a URL',
    description: 'Fetches a PDF, Word, Excel, PowerPoint, JPG or PNG from a public https URL, makes it a flipbook and waits for the conversion (reporting progress). Answers with the new book\'s id and address, or with how far the conversion got if it takes longer than the wait.',
    inputSchema: {
      url: z.string().url().max(2048).describe('A public https address of the document.'),
      name: z.string().min(1).max(255).optional().describe('The book\'s name (default: the file name).'),
      publish: z.boolean().optional().describe('Publish as soon as it is converted (default: keep as a draft).'),
    },
  }, ({ url, name, publish }, extra) => run(async () => {
    const progressToken = extra._meta?.progressToken;
    const progress: Progress = async (done, total, message) => {
      if (progressToken === undefined) return;
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: done, ...(total ? { total } : {}), message } });
    };
    let file;
    try {
      file = await deps.download(url);
    } catch (error) {
      return { content: [{ type: 'text', text: `Could not fetch the document: ${(error as Error).message}` }], isError: true };
    }
    await progress(0, undefined, `Downloaded ${file.bytes.length} bytes; uploading.`);
    const form = new FormData();
    form.set('files[]', new Blob([new Uint8Array(file.bytes)], { type: file.contentType }), name ? `${name}${extensionOf(file.filename)}` : file.filename);
    if (name) form.set('original_filename', `${name}${extensionOf(file.filename)}`);
    if (publish) form.set('status', 'publish');
    const encoded = new Response(form);
    const raw = Buffer.from(await encoded.arrayBuffer());
    const accepted = expectOk(await call('POST', '/v1/books', undefined, { raw, contentType: encoded.headers.get('content-type')! }));
    const batchId: string = accepted.data.batch_id;
    const deadline = Date.now() + deps.maxWaitMs;
    let batch = accepted.data;
    while (!['completed', 'failed', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      batch = expectOk(await call('GET', `/v1/batches/${encodeURIComponent(batchId)}`)).data;
      await progress(batch.progress.completed, batch.progress.total || undefined, `Converting: ${batch.progress.completed} of ${batch.progress.total || '?'} pages.`);
    }
    const book = (batch.books as Book[])[0];
    if (batch.status === 'failed') {
      const reason = typeof batch.error === 'string' ? batch.error : batch.error?.message ?? 'unknown reason';
      return { content: [{ type: 'text', text: `The conversion failed: ${reason}` }], isError: true };
    }
    if (batch.status !== 'completed') {
      return text(`Still converting after ${seconds(deps.maxWaitMs)}: ${batch.progress.completed} of ${batch.progress.total || '?'} pages. Upload batch ${batchId}${book ? `, book id ${book.random_id}` : ''}; ask again with describe_book.`, { batch_id: batchId, status: batch.status, book_id: book?.random_id ?? null });
    }
    const warnings = (batch.warnings as { message?: string }[] | undefined)?.map((w) => w.message).filter(Boolean) ?? [];
    return text([
      `Converted: ${book!.name} (id ${book!.random_id}), ${book!.page_count} pages, ${book!.status ?? 'draft'}.`,
      book!.preview_url ? `Reader: ${book!.preview_url}` : '',
      warnings.length ? `Fidelity warnings: ${warnings.join('; ')}` : '',
    ].filter(Boolean).join('\n'), { book_id: book!.random_id, batch_id: batchId, page_count: book!.page_count });
  }));

  const setStatus = (status: 'publish' | 'draft') => ({ book_id }: { book_id: string }) => run(async () => {
    const updated = expectOk(await call('PUT', `/v1/books/${encodeURIComponent(book_id)}`, { status })).data as Book;
    return text(status === 'publish' ? `Published: ${updated.name} is public at ${updated.preview_url}.` : `Unpublished: ${updated.name} is a draft again; its address answers "not found" to readers.`, { book_id: updated.random_id, status: updated.status });
  });
  server.registerTool('publish_book', {
    title: 'Publish a book', description: 'Makes a book public now, at its reader address.', inputSchema: { book_id: BookId },
  }, setStatus('publish'));
  server.registerTool('unpublish_book', {
    title: 'Unpublish a book', description: 'Takes a book back to draft: readers can no longer open it.', inputSchema: { book_id: BookId },
  }, setStatus('draft'));

  server.registerTool('update_book_settings', {
    title: 'Change a book\'s settings',
    description: 'Renames a book, changes its description, or sets viewer settings. Only the fields given change; the status stays as it is.',
    inputSchema: {
      book_id: BookId,
      title: z.string().min(1).max(255).optional().describe('New name.'),
      description: z.string().max(50_000).optional(),
      downloadable_pdf: z.boolean().optional().describe('Readers may download the PDF.'),
      allow_fullscreen: z.boolean().optional(),
      share_social_media: z.boolean().optional().describe('Show share buttons.'),
      flip_sound: z.boolean().optional().describe('Page-turn sound.'),
      background: z.string().max(2048).optional().describe('Reader background: a CSS color such as #20304a.'),
      expires_at: z.string().max(64).optional().describe('ISO 8601 date-time when the book stops being public.'),
    },
  }, ({ book_id, ...changes }) => run(async () => {
    const book = await getBook(book_id);
    const status = book.status === 'publish' || book.status === 'schedule' ? book.status : 'draft';
    const body: Record<string, unknown> = { status, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
    if (status === 'schedule' && book.published_date) body.published_date = book.published_date;
    const updated = expectOk(await call('PUT', `/v1/books/${encodeURIComponent(book_id)}`, body)).data as Book;
    const changed = Object.keys(changes).filter((k) => changes[k as keyof typeof changes] !== undefined);
    return text(`Updated ${updated.name}: ${changed.join(', ') || 'nothing to change'}.`, { book_id: updated.random_id });
  }));

  server.registerTool('share_book', {
    title: 'Share a book',
    description: 'Gives a book\'s public address and the HTML to embed it in a web page; with a link name, also makes a tracked link so visits through it are counted apart (for a newsletter, a campaign).',
    inputSchema: { book_id: BookId, tracked_link_name: z.string().min(1).max(255).optional().describe('Name of a new tracked link, e.g. "March newsletter".') },
  }, ({ book_id, tracked_link_name }) => run(async () => {
    const book = await getBook(book_id);
    const lines = [
      `${book.name} is ${book.status === 'publish' ? 'public' : `not public yet (${book.status ?? 'draft'}): publish it first`}.`,
      `Address: ${book.preview_url}`,
      `Embed code:\n${book.embed_code}`,
    ];
    let link: { url: string; slug: string } | null = null;
    if (tracked_link_name) {
      link = expectOk(await call('POST', `/v1/books/${encodeURIComponent(book_id)}/tracked-links`, { name: tracked_link_name })).data;
      lines.push(`Tracked link "${tracked_link_name}": ${link!.url}`);
    }
    return text(lines.join('\n'), { url: book.preview_url, embed_code: book.embed_code, tracked_link_url: link?.url ?? null });
  }));

  server.registerTool('add_readers', {
    title: 'Add readers to a book\'s access list',
    description: 'Lets these e-mail addresses (or whole domains, such as example.com) read a book; once a book has an access list, readers sign in with a mailed link.',
    inputSchema: { book_id: BookId, readers: z.array(z.string().min(1).max(255)).min(1).max(100).describe('E-mail addresses or domains.') },
  }, ({ book_id, readers }) => run(async () => {
    const added: string[] = [];
    const refused: string[] = [];
    for (const entry of readers) {
      const answer = await call('POST', '/v1/subscribers', { book_id, email: entry });
      if (answer.status >= 200 && answer.status < 300) added.push(entry);
      else if (answer.status === 403 || answer.status === 404) expectOk(answer); // a missing scope or book stops the whole call
      else refused.push(`${entry} (${answer.body?.error?.message ?? answer.status})`);
    }
    return text(`Added ${added.length} of ${readers.length}.${refused.length ? ` Not added: ${refused.join('; ')}` : ''}`, { added, refused });
  }));

  server.registerTool('book_analytics', {
    title: 'Summarise a book\'s analytics',
    description: 'Visits, readers, time per page, where readers leave, and the tracked links that brought them, for a date range. Needs the Company plan and the analytics:read scope.',
    inputSchema: { book_id: BookId, range: Range },
  }, ({ book_id, range }) => run(async () => {
    const query = new URLSearchParams({ book_id });
    if (range && range !== 'all') query.set('date', range);
    const pages = expectOk(await call('GET', `/v1/analytics/page-performance?${query}`)).data as { page_number: number; unique_readers: number; avg_active_seconds_per_reader: number; total_active_seconds: number }[];
    const flowAnswer = expectOk(await call('GET', `/v1/analytics/book-flow?${query}`));
    const flow = flowAnswer.data as { pages: { page_number: number; views: number; entries: number; exits: number }[] };
    const visits = flowAnswer.meta.visits as number;
    const links = expectOk(await call('GET', `/v1/books/${encodeURIComponent(book_id)}/tracked-links?limit=100`)).data as { name: string; visits: number; url: string }[];
    const readers = Math.max(0, ...pages.map((p) => p.unique_readers));
    const totalSeconds = pages.reduce((sum, p) => sum + p.total_active_seconds, 0);
    const byAttention = [...pages].sort((a, b) => b.avg_active_seconds_per_reader - a.avg_active_seconds_per_reader);
    const exits = [...flow.pages].filter((p) => p.exits > 0).sort((a, b) => b.exits - a.exits);
    const lines = [
      `Range: ${range ?? 'all time'}. Visits: ${visits}. Readers (on the most-read page): ${readers}. Reading time: ${Math.round(totalSeconds / 60)} min in all.`,
      byAttention.length ? `Most attention per reader: ${byAttention.slice(0, 3).map((p) => `p. ${p.page_number} (${p.avg_active_seconds_per_reader.toFixed(1)} s)`).join(', ')}; least: ${byAttention.slice(-3).reverse().map((p) => `p. ${p.page_number} (${p.avg_active_seconds_per_reader.toFixed(1)} s)`).join(', ')}.` : 'No page was read in this range.',
      exits.length ? `Where visits end: ${exits.slice(0, 5).map((p) => `p. ${p.page_number} (${p.exits})`).join(', ')}.` : '',
      links.length ? `Tracked links by visits (all time): ${[...links].sort((a, b) => b.visits - a.visits).slice(0, 5).map((l) => `${l.name} (${l.visits})`).join(', ')}.` : 'No tracked links.',
    ];
    return text(lines.filter(Boolean).join('\n'), {
      visits, readers, reading_seconds: totalSeconds,
      pages: pages.map((p) => ({ page: p.page_number, readers: p.unique_readers, avg_seconds_per_reader: p.avg_active_seconds_per_reader })),
      exits: exits.map((p) => ({ page: p.page_number, exits: p.exits })),
    });
  }));

  server.registerTool('list_leads', {
    title: 'List captured leads',
    description: 'The people who filled in a book\'s lead form (name, e-mail, phone, company, message), newest first.',
    inputSchema: { book_id: BookId, range: Range, limit: z.number().int().min(1).max(200).optional().describe('How many (default 50).') },
  }, ({ book_id, range, limit }) => run(async () => {
    const query = new URLSearchParams();
    if (range && range !== 'all') query.set('date', range);
    const csv = await call('GET', `/v1/exports/books/${encodeURIComponent(book_id)}/leads?${query}`);
    if (csv.status !== 200) expectOk(csv);
    const rows = parseCsv(csv.text.replace(/^\uFEFF/, ''), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
    rows.sort((a, b) => (b.submitted_at ?? '').localeCompare(a.submitted_at ?? ''));
    const shown = rows.slice(0, limit ?? 50);
    if (shown.length === 0) return text('No leads in this range.', { leads: [] });
    return text(`${rows.length} lead(s)${rows.length > shown.length ? `, the newest ${shown.length}` : ''}:\n${shown.map((r) => `- ${r.submitted_at}: ${[r.name, r.email, r.phone, r.company].filter(Boolean).join(', ')}${r.message ? ` ("${r.message}")` : ''}`).join('\n')}`, { leads: shown });
  }));

  server.registerTool('read_book_text', {
    title: 'Read a book\'s text',
    description: 'The text of a range of pages, page by page (at most 20 pages a call), to answer questions about a book\'s content.',
    inputSchema: {
      book_id: BookId,
      from_page: z.number().int().min(1).optional().describe('First page (default 1).'),
      to_page: z.number().int().min(1).optional().describe('Last page (default from_page + 9, at most from_page + 19).'),
    },
  }, ({ book_id, from_page, to_page }) => run(async () => {
    const first = from_page ?? 1;
    const last = Math.min(to_page ?? first + 9, first + 19);
    if (last < first) return { content: [{ type: 'text', text: 'to_page must not be before from_page.' }], isError: true };
    const book = await getBook(book_id);
    const out: { page: number; text: string }[] = [];
    let cursor: string | null = null;
    // Pages come in order; skip to the range through the cursor pages.
    do {
      const query = new URLSearchParams({ limit: '50' });
      if (cursor) query.set('cursor', cursor);
      const page = expectOk(await call('GET', `/v1/books/${encodeURIComponent(book_id)}/pages?${query}`));
      for (const p of page.data as { number: number; text: { text: string }[] }[]) {
        if (p.number >= first && p.number <= last) out.push({ page: p.number, text: p.text.map((t) => t.text).join(' ').replace(/\s+/g, ' ').trim() });
      }
      const lastSeen = (page.data as { number: number }[]).at(-1)?.number ?? last;
      cursor = page.meta.has_more && lastSeen < last ? page.meta.next_cursor : null;
    } while (cursor);
    if (out.length === 0) return text(`${book.name} has ${book.page_count} pages; none in ${first}-${last}.`, { pages: [] });
    const more = last < book.page_count ? `\n(Pages ${last + 1}-${book.page_count} remain: call again with from_page ${last + 1}.)` : '';
    return text(`${book.name}, pages ${first}-${Math.min(last, book.page_count)} of ${book.page_count}:\n\n${out.map((p) => `[Page ${p.page}]\n${p.text || '(no text on this page)'}`).join('\n\n')}${more}`, { pages: out });
  }));
}

function extensionOf(filename: string): string {
  const match = /\.[A-Za-z0-9]{1,5}$/.exec(filename);
  return match ? match[0] : '';
}

interface OutlineNode { title: string; page: number | null; children: OutlineNode[] }

function flattenOutline(nodes: unknown, depth = 0): { title: string; page: number | null; depth: number }[] {
  if (!Array.isArray(nodes)) return [];
  return (nodes as OutlineNode[]).flatMap((n) => [{ title: n.title, page: n.page, depth }, ...flattenOutline(n.children, depth + 1)]);
}
