/**
 * The reader's access policy (reader.access.ts) built from a book's lists:
 *
 * - Embed domains: while the list is in force, the page's CSP
 *   frame-ancestors names the listed hosts and their subdomains, and a page
 *   request made for a frame (Sec-Fetch-Dest) whose Referer is on another
 *   host is refused outright, for browsers that do not enforce CSP. A direct
 *   visit (not framed) stays allowed: the list governs where the book may be
 *   embedded; who may read it is the access list's job.
 * - Access list: while it is in force, a reader needs a session from the
 *   gate (reader-session.ts) for an address still on the list; otherwise the
 *   page answers the sign-in form (401) and every other reader request 401.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ReaderAccessDecision, ReaderAccessPolicy, ReaderAccessRequest } from '../reader/reader.access.ts';
import type { AccessListsService } from './access-lists.service.ts';
import { DEFAULT_GATE_MESSAGE } from './access-gate.service.ts';
import { renderGatePage } from './gate.html.ts';
import type { ReaderSessions } from './reader-session.ts';

const FRAME_DESTINATIONS = new Set(['iframe', 'frame', 'embed', 'object', 'fencedframe']);

/** CSP sources for a host and its subdomains, on any port (the scheme follows the reader's). */
export function frameAncestorSources(hosts: readonly string[]): string[] {
  return hosts.flatMap((host) => [`${host}:*`, `*.${host}:*`]);
}

export function hostAdmitted(hosts: readonly string[], host: string): boolean {
  const candidate = host.toLowerCase();
  return hosts.some((h) => candidate === h || candidate.endsWith(`.${h}`));
}

/** The host of the page embedding this request, when the browser says it is framed and names the page. */
function embedder(headers: IncomingHttpHeaders): { framed: boolean; host: string | null } {
  const framed = FRAME_DESTINATIONS.has(String(headers['sec-fetch-dest'] ?? ''));
  const referer = headers.referer;
  if (!framed || typeof referer !== 'string') return { framed, host: null };
  try {
    return { framed, host: new URL(referer).hostname };
  } catch {
    return { framed, host: null };
  }
}

export class ListsReaderPolicy implements ReaderAccessPolicy {
  private readonly lists: AccessListsService;
  private readonly sessions: ReaderSessions;

  constructor(deps: { lists: AccessListsService; sessions: ReaderSessions }) {
    this.lists = deps.lists;
    this.sessions = deps.sessions;
  }

  async check(request: ReaderAccessRequest): Promise<ReaderAccessDecision> {
    const { book } = request;
    let frameAncestors: '*' | string[] = '*';
    if (book.settings.domains_enabled) {
      const hosts = await this.lists.embedHosts(book.row.id);
      if (hosts.length > 0) {
        frameAncestors = frameAncestorSources(hosts);
        const embedding = embedder(request.headers);
        // Without a Referer (a no-referrer page), the browser's own frame-ancestors check decides.
        if (request.kind === 'page' && embedding.framed && embedding.host && !hostAdmitted(hosts, embedding.host)) {
          // The refusal notice itself may show in the frame: it tells the visitor why, and reveals nothing of the book.
          return {
            allow: false, status: 403, frameAncestors: '*',
            title: 'Not available on this site',
            message: 'The publisher of this flipbook does not allow it to be shown on this website.',
          };
        }
      }
    }
    if (book.settings.eod_enabled) {
      const session = this.sessions.read(request.headers.cookie, book.row.randomId);
      if (session && (await this.lists.admits(book.row.id, session.email))) {
        return { allow: true, frameAncestors, viewer: { email: session.email } };
      }
      const message = book.settings.magic_link_message || DEFAULT_GATE_MESSAGE;
      return {
        allow: false, status: 401, frameAncestors,
        title: 'Sign in to read',
        message,
        html: request.kind === 'page'
          ? (nonce) => renderGatePage({ nonce, bookName: book.row.name, title: 'Sign in to read', message, action: `/read/${book.row.randomId}/access` })
          : undefined,
      };
    }
    return { allow: true, frameAncestors };
  }
}
