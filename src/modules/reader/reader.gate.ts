/**
 * The one check every public reader request passes: is the book public
 * (reader.service.ts availability), and does the access policy let this
 * visitor in from where they are (reader.access.ts)? Shared by the reader's
 * own routes and by every other public endpoint bound to a book (reader
 * events), so they can never disagree about who may see what.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ReaderAccessPolicy, ReaderRequestKind, ReaderViewer } from './reader.access.ts';
import type { ReaderBook, ReaderService } from './reader.service.ts';

export interface GateRequest {
  randomId: string;
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  ip: string;
}

export type GateResult =
  | { ok: true; book: ReaderBook; frameAncestors: '*' | string[]; viewer: ReaderViewer | null }
  | { ok: false; status: number; title: string; message: string; html?: (nonce: string) => string; bookName?: string; frameAncestors: '*' | string[] };

export class ReaderGate {
  readonly service: ReaderService;
  private readonly access: ReaderAccessPolicy;

  constructor(service: ReaderService, access: ReaderAccessPolicy) {
    this.service = service;
    this.access = access;
  }

  /** Availability, then the access policy. */
  async check(request: GateRequest, kind: ReaderRequestKind): Promise<GateResult> {
    const book = await this.service.find(request.randomId);
    const availability = this.service.availability(book);
    if (availability === 'missing' || !book) {
      return { ok: false, status: 404, title: 'Flipbook not found', message: 'There is no flipbook at this address, or it is not published.', frameAncestors: '*' };
    }
    if (availability === 'gone') {
      return { ok: false, status: 410, title: 'Flipbook no longer available', message: 'This flipbook is no longer available: its publisher set it to expire.', bookName: book.row.name, frameAncestors: '*' };
    }
    const decision = await this.access.check({ book, kind, headers: request.headers, query: request.query, ip: request.ip });
    if (!decision.allow) {
      return { ok: false, status: decision.status, title: decision.title, message: decision.message, html: decision.html, bookName: book.row.name, frameAncestors: decision.frameAncestors ?? '*' };
    }
    if (availability === 'billing_expired') {
      // Still published; the publisher's subscription lapsed, so the pages are withheld.
      const status = kind === 'page' ? 200 : 403;
      return { ok: false, status, title: 'Flipbook temporarily unavailable', message: 'This flipbook has expired and is temporarily unavailable. Please check back later or contact its publisher.', bookName: book.row.name, frameAncestors: decision.frameAncestors };
    }
    return { ok: true, book, frameAncestors: decision.frameAncestors, viewer: decision.viewer ?? null };
  }
}
