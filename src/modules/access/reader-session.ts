/**
 * The signed, HTTP-only cookie that says "this browser signed in to this
 * book as this address". Stateless (an HMAC over book, address and expiry),
 * so any API process with the same SECRET_KEY accepts it; removing the
 * address from the list still shuts the reader out, because the policy
 * checks the list on every request.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'fb_reader';

export interface ReaderSession {
  email: string;
  expiresAt: Date;
}

export class ReaderSessions {
  private readonly key: Buffer;
  private readonly lifetimeMs: number;
  private readonly secure: boolean;

  constructor(options: { secret: string; lifetimeHours: number; publicBaseUrl: string }) {
    // A key of its own, so a leak elsewhere of something signed with the secret cannot forge sessions.
    this.key = createHmac('sha256', options.secret).update('flipbook reader session v1').digest();
    this.lifetimeMs = options.lifetimeHours * 3_600_000;
    this.secure = options.publicBaseUrl.startsWith('https:');
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  /** A Set-Cookie value for a new session, scoped to the book's reader path. */
  issue(randomId: string, email: string, now = Date.now()): string {
    const expires = now + this.lifetimeMs;
    const payload = Buffer.from(JSON.stringify({ b: randomId, e: email, x: expires })).toString('base64url');
    const value = `${payload}.${this.sign(payload)}`;
    // Embedded readers live in third-party frames: there the cookie needs SameSite=None, which needs Secure (https).
    const site = this.secure ? 'SameSite=None; Secure' : 'SameSite=Lax';
    return `${SESSION_COOKIE}=${value}; Path=/read/${randomId}; Expires=${new Date(expires).toUTCString()}; HttpOnly; ${site}`;
  }

  /** The session in a Cookie header for this book, if it is genuine and current. */
  read(cookieHeader: string | undefined, randomId: string, now = Date.now()): ReaderSession | null {
    if (!cookieHeader) return null;
    for (const part of cookieHeader.split(';')) {
      const [name, value] = part.trim().split('=', 2) as [string, string | undefined];
      if (name !== SESSION_COOKIE || !value) continue;
      const session = this.verify(value, randomId, now);
      if (session) return session;
    }
    return null;
  }

  private verify(value: string, randomId: string, now: number): ReaderSession | null {
    const [payload, signature] = value.split('.');
    if (!payload || !signature) return null;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { b?: unknown; e?: unknown; x?: unknown };
      if (data.b !== randomId || typeof data.e !== 'string' || typeof data.x !== 'number' || data.x <= now) return null;
      return { email: data.e, expiresAt: new Date(data.x) };
    } catch {
      return null;
    }
  }
}
