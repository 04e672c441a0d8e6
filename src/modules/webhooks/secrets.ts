/**
 * Signing secrets: `whsec_` + base64 of 32 random bytes (Standard Webhooks
 * allows 24-64). The service must sign with a secret long after it was shown,
 * so it cannot keep a hash: it keeps it encrypted with AES-256-GCM under a key
 * derived (HKDF-SHA256) from the service secret, and never returns or logs it.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(serviceSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', serviceSecret, 'flipbook', 'webhook-signing-secrets/v1', 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('Unknown sealed secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
