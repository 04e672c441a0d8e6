/**
 * Passkeys (WebAuthn), through @simplewebauthn/server: a signed-in person
 * registers one; anyone signs in with one (discoverable credentials, so no
 * e-mail address is asked first). Challenges are single-use rows that live
 * five minutes. The relying party is PUBLIC_BASE_URL's host: WebAuthn refuses
 * IP addresses, so passkeys are off when the service is addressed by one.
 */
import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import { isIP } from 'node:net';
import { randomToken } from '../../platform/auth/tokens.ts';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { passkeys, users, webauthnChallenges, type PasskeyRow } from './people.tables.ts';

const CHALLENGE_TTL_MS = 5 * 60_000;
const MAX_PASSKEYS = 20;

export interface PasskeyView {
  id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

function toView(p: PasskeyRow): PasskeyView {
  return { id: p.id, name: p.name, created_at: p.createdAt.toISOString(), last_used_at: p.lastUsedAt?.toISOString() ?? null };
}

export class PasskeysService {
  private readonly db: Db;
  private readonly origin: string;
  private readonly rpID: string;

  constructor(options: { db: Db; publicBaseUrl: string }) {
    this.db = options.db;
    const url = new URL(options.publicBaseUrl);
    this.origin = url.origin;
    this.rpID = url.hostname;
  }

  /** WebAuthn needs a domain name (localhost counts), not an IP address. */
  get available(): boolean {
    return isIP(this.rpID.replace(/^\[|\]$/g, '')) === 0;
  }

  private assertAvailable(): void {
    if (!this.available) throw ERRORS.forbidden('Passkeys need the service to be addressed by a domain name (PUBLIC_BASE_URL), not an IP address.');
  }

  private async saveChallenge(challenge: string, purpose: 'register' | 'authenticate', userId: number | null): Promise<string> {
    const id = randomToken();
    // Expired challenges are swept by whoever makes a new one.
    await this.db.delete(webauthnChallenges).where(lt(webauthnChallenges.expiresAt, sql`now()`));
    await this.db.insert(webauthnChallenges).values({ id, challenge, purpose, userId, expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS) });
    return id;
  }

  /** Takes a challenge out (once); null when unknown, expired or for something else. */
  private async takeChallenge(id: string, purpose: 'register' | 'authenticate', userId: number | null): Promise<string | null> {
    const [row] = await this.db.delete(webauthnChallenges)
      .where(and(eq(webauthnChallenges.id, id), eq(webauthnChallenges.purpose, purpose), gt(webauthnChallenges.expiresAt, sql`now()`)))
      .returning();
    if (!row || (userId !== null && row.userId !== userId)) return null;
    return row.challenge;
  }

  async list(userId: number): Promise<PasskeyView[]> {
    const rows = await this.db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.id));
    return rows.map(toView);
  }

  async registrationOptions(userId: number): Promise<{ challenge_id: string; options: unknown }> {
    this.assertAvailable();
    const [user] = await this.db.select().from(users).where(eq(users.id, userId));
    if (!user) throw ERRORS.unauthenticated('Your session has ended: sign in again.');
    const existing = await this.db.select().from(passkeys).where(eq(passkeys.userId, userId));
    if (existing.length >= MAX_PASSKEYS) throw ERRORS.conflict(`An account holds at most ${MAX_PASSKEYS} passkeys; remove one first.`);
    const options = await generateRegistrationOptions({
      rpName: 'Flipbook',
      rpID: this.rpID,
      userName: user.email,
      userDisplayName: user.name ?? user.email,
      userID: new TextEncoder().encode(`flipbook-user-${user.id}`),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    return { challenge_id: await this.saveChallenge(options.challenge, 'register', userId), options };
  }

  async register(userId: number, input: { challenge_id: string; response: unknown; name?: string }): Promise<PasskeyView> {
    this.assertAvailable();
    const challenge = await this.takeChallenge(input.challenge_id, 'register', userId);
    if (!challenge) throw ERRORS.validation({ challenge_id: ['This passkey request has expired or was already used; start again.'] });
    let verification;
    try {
      verification = await verifyRegistrationResponse({
        response: input.response as RegistrationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpID,
        requireUserVerification: false,
      });
    } catch (error) {
      throw ERRORS.validation({ response: [`The passkey could not be verified: ${error instanceof Error ? error.message : 'invalid response'}.`] });
    }
    if (!verification.verified) throw ERRORS.validation({ response: ['The passkey could not be verified.'] });
    const { credential, credentialBackedUp } = verification.registrationInfo;
    const name = input.name?.trim().slice(0, 100) || `Passkey added ${new Date().toISOString().slice(0, 10)}`;
    const [row] = await this.db.insert(passkeys).values({
      userId,
      credentialId: credential.id,
      publicKey: isoBase64URL.fromBuffer(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      backedUp: credentialBackedUp,
      name,
    }).onConflictDoNothing().returning();
    if (!row) throw ERRORS.conflict('This passkey is already registered.');
    return toView(row);
  }

  async remove(userId: number, passkeyId: number): Promise<void> {
    const removed = await this.db.delete(passkeys).where(and(eq(passkeys.id, passkeyId), eq(passkeys.userId, userId))).returning({ id: passkeys.id });
    if (removed.length === 0) throw ERRORS.notFound('Passkey');
  }

  async authenticationOptions(): Promise<{ challenge_id: string; options: unknown }> {
    this.assertAvailable();
    const options = await generateAuthenticationOptions({ rpID: this.rpID, userVerification: 'preferred' });
    return { challenge_id: await this.saveChallenge(options.challenge, 'authenticate', null), options };
  }

  /** The user a passkey assertion proves, or a 401 that says no more than "refused". */
  async authenticate(input: { challenge_id: string; response: unknown }): Promise<number> {
    this.assertAvailable();
    const refused = () => ERRORS.unauthenticated('The passkey was not accepted. Try again, or sign in with a link.');
    const challenge = await this.takeChallenge(input.challenge_id, 'authenticate', null);
    const response = input.response as AuthenticationResponseJSON;
    if (!challenge || typeof response?.id !== 'string') throw refused();
    const [stored] = await this.db.select().from(passkeys).where(eq(passkeys.credentialId, response.id));
    if (!stored) throw refused();
    let verification;
    try {
      verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpID,
        credential: { id: stored.credentialId, publicKey: isoBase64URL.toBuffer(stored.publicKey), counter: stored.counter, transports: stored.transports },
        requireUserVerification: false,
      });
    } catch {
      throw refused();
    }
    if (!verification.verified) throw refused();
    await this.db.update(passkeys).set({ counter: verification.authenticationInfo.newCounter, lastUsedAt: new Date() }).where(eq(passkeys.id, stored.id));
    return stored.userId;
  }
}
