/**
 * The hook for who may open a public book, and from where. Every reader
 * request (the page, search, text, download) asks the policy after the book
 * is found to be public and before anything of it is sent. The default lets
 * everyone in from anywhere; the access gate (e-mail/OTP lists) and the
 * embed-domain allow-list plug in here by passing another policy to
 * readerRoutes.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ReaderBook } from './reader.service.ts';

export type ReaderRequestKind = 'page' | 'search' | 'text' | 'download' | 'events';

/** A reader identified by the access gate. */
export interface ReaderViewer {
  email: string;
}

export interface ReaderAccessRequest {
  book: ReaderBook;
  kind: ReaderRequestKind;
  /** Referer, Origin, Sec-Fetch-Dest (iframe or document), cookies. */
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  ip: string;
}

export type ReaderAccessDecision =
  | {
      allow: true;
      /** The CSP frame-ancestors sources for the page: '*' (embeddable anywhere) or a list such as ["'self'", 'https://shop.example']. */
      frameAncestors: '*' | string[];
      /** Who the reader is, when the access gate identified them. */
      viewer?: ReaderViewer;
    }
  | {
      allow: false;
      /** 401, 403 or 404. */
      status: number;
      title: string;
      message: string;
      /** A complete page to answer with instead of the standard notice (a sign-in form, say), given the CSP nonce for its styles. */
      html?: (nonce: string) => string;
      frameAncestors?: '*' | string[];
    };

export interface ReaderAccessPolicy {
  check(request: ReaderAccessRequest): Promise<ReaderAccessDecision>;
}

/** Everyone, from everywhere, in any frame: the behaviour until access lists and embed domains arrive. */
export const allowAllReaders: ReaderAccessPolicy = {
  async check() {
    return { allow: true, frameAncestors: '*' };
  },
};
