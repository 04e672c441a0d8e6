/**
 * Browser harness for the application's screens: the real service on
 * `localhost` (WebAuthn needs a domain name, and the session's CSRF check
 * wants the public origin), Debian's Chromium through playwright-core,
 * sign-in through the mailed link, and axe-core at desktop and phone widths.
 *
 * The screens' browser tests run once in CI, in its PostgreSQL pass; locally
 * they run on PGlite when DATABASE_URL is empty.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { books } from '../../src/modules/books/books.tables.ts';
import { insertBook } from '../factories.ts';
import { freePort, startService, type TestService } from '../helpers.ts';
import { mailedLink } from '../people/people-helpers.ts';
import { BROWSER_SKIP, axeViolations, launchBrowser } from '../reader/browser.ts';

export const WEB_SKIP: string | false = BROWSER_SKIP;

export const DESKTOP = { width: 1280, height: 800 };
export const NARROW = { width: 360, height: 740 };

export interface WebService extends TestService {
  /** The application's origin as the browser sees it: http://localhost:<port>. */
  origin: string;
}

/** `worker: true` converts uploads (the publishing screens follow them to ready). */
export async function startWebService(env: Record<string, unknown> = {}, options: { worker?: boolean } = {}): Promise<WebService> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  // One browser signs many people in and out within a minute here, more than the per-client limit of
  // unauthenticated calls (10 a minute) lets one client do: a signed-out screen's GET /v1/account is one.
  const svc = await startService({ worker: options.worker ?? false, env: { PORT: port, PUBLIC_BASE_URL: origin, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 1000, ...env } });
  return Object.assign(svc, { origin });
}

/** `hosts`: more names mapped to 127.0.0.1 (a customer's site on another host name). */
export function launchWebBrowser(hosts: string[] = []): Promise<Browser> {
  return launchBrowser([`--host-resolver-rules=${['localhost', ...hosts].map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`]);
}

export interface AppTab {
  context: BrowserContext;
  page: Page;
  /** Page errors, CSP violations and console errors other than the failed requests' own (a 401, a 429 are expected answers). */
  problems: string[];
  close(): Promise<void>;
}

export async function openApp(browser: Browser): Promise<AppTab> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { context, page, problems, close: () => context.close() };
}

/** The first screen after the given navigation has its heading. */
export async function heading(page: Page, name: string | RegExp): Promise<void> {
  try {
    await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: 15_000 });
  } catch (error) {
    // Say what the screen shows instead.
    const shown = await page.evaluate(() => document.body.innerText.replace(/\s+/g, ' ').slice(0, 600)).catch(() => '(no page)');
    throw new Error(`No heading ${String(name)} at ${page.url()}; the page shows: ${shown}`, { cause: error });
  }
}

/**
 * axe-core (WCAG 2.2 AA and best practices, target size on) finds nothing at
 * 1280 px and at 360 px; the page does not scroll sideways at 360 px.
 */
export async function assertAccessible(page: Page, label: string): Promise<void> {
  const before = page.viewportSize() ?? DESKTOP;
  try {
    for (const viewport of [DESKTOP, NARROW]) {
      await page.setViewportSize(viewport);
      await page.evaluate(() => new Promise(requestAnimationFrame));
      const violations = await axeViolations(page, ['target-size']);
      assert.deepEqual(violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `${label} at ${viewport.width} px`);
      if (viewport === NARROW) {
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= NARROW.width, `${label} fits 360 px (the page is ${width} px wide)`);
      }
    }
  } finally {
    await page.setViewportSize(before);
  }
}

/**
 * What has the focus, as "tag name": the element's tag, then its aria-label, else its label's text (a form
 * field), else its own text.
 */
export function focusedElement(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el) return '';
    const name = el.getAttribute('aria-label') ?? ((el as HTMLInputElement).labels?.[0]?.textContent || el.textContent || '');
    return `${el.tagName.toLowerCase()} ${name.trim()}`;
  });
}

/** Presses Tab until what has the focus matches `target` (see focusedElement), at most `max` times. */
export async function tabTo(page: Page, target: RegExp, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (target.test(await focusedElement(page))) return;
  }
  assert.fail(`Tab never reached ${target}; last: ${await focusedElement(page)}`);
}

/** The link of the latest sign-in e-mail to `email`, pointed at the browser's origin. */
export async function signInLink(svc: WebService, email: string): Promise<string> {
  return mailedLink(svc, email, 'sign-in/verify');
}

/** Asks for a link on the sign-in screen, opens it from the outbox, and waits for the home screen. */
export async function signInThroughScreen(page: Page, svc: WebService, email: string): Promise<void> {
  await page.goto(`${svc.origin}/app/sign-in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  await page.goto(await signInLink(svc, email));
  await heading(page, 'Home');
}

/** A workspace with a person in `role`, added as the operator would. */
export async function personIn(svc: WebService, workspaceId: number, email: string, role: 'viewer' | 'editor' | 'admin' | 'owner'): Promise<void> {
  await svc.runtime.services.members.addByOperator(workspaceId, email, role, { type: 'operator' });
}

type Role = 'viewer' | 'editor' | 'admin' | 'owner';

export interface WebSuiteOptions {
  /** The workspace every test of the suite works in. */
  workspace: { name: string; plan?: string };
  /** A published book made in it before the tests (`bookId`), with these columns. */
  book?: Partial<typeof books.$inferInsert>;
  env?: Record<string, unknown>;
  /** `worker: true` runs the jobs (conversions, batches, deliveries). */
  worker?: boolean;
  /** Host names besides localhost that Chromium sends to 127.0.0.1. */
  hosts?: string[];
}

export interface WebSuite {
  svc: WebService;
  browser: Browser;
  workspaceId: number;
  /** An API key of the workspace, for what a test sets up or checks through the API. */
  key: string;
  /** The suite's published book (when `book` was given). */
  bookId: string;
  /**
   * `email` signed in through the sign-in screen in a fresh tab (added to the workspace as `role` first, unless
   * null: already a member), then `use`; the tab is closed after, whatever happens.
   */
  signedIn<T>(email: string, role: Role | null, use: (tab: AppTab) => Promise<T>): Promise<T>;
  /** A fresh tab, signed out, then `use`; the tab is closed after, whatever happens. */
  inTab<T>(use: (tab: AppTab) => Promise<T>): Promise<T>;
  /** Goes to `path` of the service (`/app/…`) and waits for the screen's heading `name`. */
  visit(page: Page, path: string, name: string | RegExp): Promise<void>;
}

/**
 * A browser suite's set-up, the same in every screen's test: the service on localhost, one workspace (and a
 * published book), Chromium; all stopped after. Call it inside `describe`: it adds the before and after hooks, and
 * the fields of what it returns are set once `before` has run.
 */
export function webSuite(options: WebSuiteOptions): WebSuite {
  const suite = {
    async signedIn<T>(email: string, role: Role | null, use: (tab: AppTab) => Promise<T>): Promise<T> {
      if (role) await personIn(suite.svc, suite.workspaceId, email, role);
      return suite.inTab(async (tab) => {
        await signInThroughScreen(tab.page, suite.svc, email);
        return use(tab);
      });
    },
    async visit(page: Page, path: string, name: string | RegExp): Promise<void> {
      await page.goto(`${suite.svc.origin}${path}`);
      await heading(page, name);
    },
    async inTab<T>(use: (tab: AppTab) => Promise<T>): Promise<T> {
      const tab = await openApp(suite.browser);
      try {
        return await use(tab);
      } finally {
        await tab.close();
      }
    },
  } as WebSuite;
  before(async () => {
    suite.svc = await startWebService(options.env, { worker: options.worker ?? false });
    const { id, key } = await suite.svc.workspace(options.workspace);
    suite.workspaceId = id;
    suite.key = key;
    if (options.book) suite.bookId = (await insertBook(suite.svc, id, { status: 'publish', publishedDate: new Date(), ...options.book })).randomId;
    suite.browser = await launchWebBrowser(options.hosts);
  });
  after(async () => {
    await suite.browser?.close();
    await suite.svc?.stop();
  });
  return suite;
}
