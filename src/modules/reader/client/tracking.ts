/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Reader events: what the reader did, reported to this book's own events
 * endpoint (POST <base>/events; no third party). A session is one page load
 * (a random id, no cookie). Pages on screen are timed while the tab is
 * visible, focused (or embedded: the embedding page keeps the focus) and not
 * idle; each page leaving the screen becomes a page_segment_completed with
 * its active milliseconds (in a spread, each visible page). Events are sent
 * every 10 s or 20 events with fetch(keepalive), and with sendBeacon when
 * the tab is hidden or the page goes away, so the last ones are not lost.
 * A batch that fails is sent again later; the server stores each event once
 * (session id + sequence number).
 */
import type { ReaderData } from '../reader.types.ts';

type EventType = 'session_started' | 'page_segment_completed' | 'link_clicked' | 'document_downloaded' | 'session_ended';

interface ReaderEvent {
  seq: number;
  type: EventType;
  page?: number;
  active_ms?: number;
  exit_reason?: 'closed' | 'navigated';
  at: number;
  metadata?: Record<string, string>;
}

export interface BatchContext {
  tl?: string;
  embedded?: boolean;
  referrer?: string;
  ver?: number;
}

const FLUSH_MS = 10_000;
const FLUSH_EVENTS = 20;
const MAX_BATCH = 200;
/** No pointer, key, wheel or scroll input for this long: the reader stepped away. */
const IDLE_MS = 120_000;
/** A page leaving within this long after a link or download click left through it. */
const NAVIGATION_WINDOW_MS = 2_000;

function newSessionId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function pageContext(): BatchContext {
  const context: BatchContext = {};
  const tl = new URLSearchParams(location.search).get('tl');
  if (tl && /^[a-z0-9-]{1,64}$/.test(tl)) context.tl = tl;
  let embedded: boolean;
  try {
    embedded = window.top !== window.self;
  } catch {
    embedded = true;
  }
  context.embedded = embedded;
  // Embedded: the embedding page (Chromium names it even without a Referer). Otherwise where the reader came from.
  const referrer = (embedded && location.ancestorOrigins?.[0]) || document.referrer;
  if (referrer) context.referrer = referrer.slice(0, 2048);
  return context;
}

export class Tracker {
  readonly url: string;
  readonly context = pageContext();
  session = newSessionId();
  private seq = 0;
  private queue: ReaderEvent[] = [];
  private sending = false;
  private timer = 0;
  /** Pages on screen now, the active time they have had together, and the session's. */
  private pages: number[] = [];
  private segmentMs = 0;
  private sessionMs = 0;
  private lastTick = performance.now();
  private lastInput = performance.now();
  private lastExitClick = -Infinity;
  private readonly pageListeners: ((pages: number[]) => void)[] = [];

  /** The application's settings preview (GET /read/{id}/preview): not a reading, so nothing is sent. */
  private readonly preview: boolean;

  constructor(data: ReaderData) {
    this.url = `${data.base}/events`;
    this.preview = data.preview === true;
    // The version read (docs/book-versions.md): an open reader keeps sending its own after the book switched.
    if (data.ver) this.context.ver = data.ver;
  }

  /** Whether time counts now: tab visible, focused (or embedded), reader not idle. */
  private active(now: number): boolean {
    return document.visibilityState === 'visible' && (this.context.embedded || document.hasFocus()) && now - this.lastInput < IDLE_MS;
  }

  /** Adds the time since the last tick to the current segment when it was active. */
  private tick(): void {
    const now = performance.now();
    if (this.active(now)) {
      // Idle began IDLE_MS after the last input: count only up to then.
      const until = Math.min(now, this.lastInput + IDLE_MS);
      const delta = Math.max(0, until - this.lastTick);
      this.segmentMs += delta;
      this.sessionMs += delta;
    }
    this.lastTick = now;
  }

  /** A sequence number for an event recorded elsewhere (the lead form). */
  nextSeq(): number {
    return this.seq++;
  }

  record(type: EventType, fields: Omit<ReaderEvent, 'seq' | 'type' | 'at'> = {}): void {
    this.queue.push({ seq: this.nextSeq(), type, at: Date.now(), ...fields });
    if (this.queue.length >= FLUSH_EVENTS) void this.flush();
  }

  /** Ends the segment of the pages on screen: one page_segment_completed per page that had active time. */
  private completeSegment(): void {
    this.tick();
    const ms = Math.round(this.segmentMs);
    if (ms > 0) for (const page of this.pages) this.record('page_segment_completed', { page, active_ms: Math.min(ms, 3_600_000) });
    this.segmentMs = 0;
  }

  /** The reader shows these pages now. */
  show(pages: number[]): void {
    if (pages.length === this.pages.length && pages.every((p, i) => p === this.pages[i])) return;
    this.completeSegment();
    this.pages = [...pages];
    for (const listener of this.pageListeners) listener(this.pages);
  }

  /** The first page on screen. */
  current(): number | undefined {
    return this.pages[0];
  }

  onPages(listener: (pages: number[]) => void): void {
    this.pageListeners.push(listener);
  }

  private body(events: ReaderEvent[]): string {
    return JSON.stringify({ session_id: this.session, active_ms: Math.min(Math.round(this.sessionMs), 86_400_000), events, context: this.context });
  }

  /** Sends what is queued with fetch(keepalive); on failure the events go back in the queue for the next try. */
  async flush(): Promise<void> {
    if (this.preview) this.queue.length = 0;
    if (this.sending || this.queue.length === 0) return;
    const events = this.queue.splice(0, MAX_BATCH);
    this.sending = true;
    try {
      const response = await fetch(this.url, { method: 'POST', body: this.body(events), headers: { 'content-type': 'application/json' }, keepalive: true, credentials: 'same-origin' });
      // 4xx other than 429: the server will never take these; drop them rather than loop.
      if (!response.ok && (response.status === 429 || response.status >= 500)) this.queue.unshift(...events);
    } catch {
      this.queue.unshift(...events);
    } finally {
      this.sending = false;
    }
  }

  /** The page may be going away: hand everything to the browser to deliver. */
  private beacon(): void {
    if (this.preview) this.queue.length = 0;
    while (this.queue.length > 0) {
      const events = this.queue.splice(0, MAX_BATCH);
      const body = this.body(events);
      if (!navigator.sendBeacon?.(this.url, body)) {
        void fetch(this.url, { method: 'POST', body, headers: { 'content-type': 'text/plain' }, keepalive: true }).catch(() => undefined);
      }
    }
  }

  /** A visit begins: session_started now, then a batch every FLUSH_MS. */
  private begin(): void {
    this.record('session_started');
    void this.flush();
    clearInterval(this.timer);
    this.timer = window.setInterval(() => void this.flush(), FLUSH_MS);
  }

  start(): void {
    this.begin();
    const input = (): void => {
      this.tick();
      this.lastInput = performance.now();
    };
    for (const type of ['pointerdown', 'pointermove', 'keydown', 'wheel', 'scroll', 'touchstart']) addEventListener(type, input, { passive: true, capture: true });
    const settle = (): void => this.tick();
    addEventListener('focus', settle);
    addEventListener('blur', settle);
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') {
        // Mobile browsers may discard a hidden tab without pagehide: deliver what the reader did so far.
        this.completeSegment();
        this.beacon();
      } else {
        this.lastTick = performance.now();
      }
    });
    addEventListener('pagehide', () => {
      this.completeSegment();
      const navigated = performance.now() - this.lastExitClick < NAVIGATION_WINDOW_MS;
      this.record('session_ended', { exit_reason: navigated ? 'navigated' : 'closed' });
      this.beacon();
      clearInterval(this.timer);
    });
    addEventListener('pageshow', (event) => {
      // Back from the back-forward cache: a new visit.
      if (!event.persisted) return;
      this.session = newSessionId();
      this.seq = 0;
      this.sessionMs = 0;
      this.segmentMs = 0;
      this.lastTick = this.lastInput = performance.now();
      this.begin();
    });
    // Links in pages and the download button.
    document.addEventListener('click', (event) => {
      const link = (event.target as Element | null)?.closest?.('a');
      if (!link) return;
      const page = Number(link.closest<HTMLElement>('.page')?.dataset.page) || this.pages[0];
      if (link.id === 'download') {
        this.lastExitClick = performance.now();
        this.record('document_downloaded', page ? { page } : {});
      } else if (link.classList.contains('lnk') && !link.getAttribute('href')?.startsWith('#')) {
        this.lastExitClick = performance.now();
        this.record('link_clicked', { ...(page ? { page } : {}), metadata: { url: link.href.slice(0, 2048) } });
      } else {
        return;
      }
      void this.flush();
    }, true);
  }
}

/** Starts reporting for this page load. */
export function startTracking(data: ReaderData): Tracker {
  const tracker = new Tracker(data);
  tracker.start();
  return tracker;
}
