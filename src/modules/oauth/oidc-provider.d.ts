/**
 * The part of oidc-provider (which ships no types) that this service uses.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type AdapterPayload = Record<string, unknown>;
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface KoaContextWithOIDC {
    cookies: { get(name: string): string | undefined };
    oidc: { route?: string; client?: { clientId: string }; params?: Record<string, unknown> } & Record<string, unknown>;
    [key: string]: unknown;
  }

  export interface InteractionModel {
    uid: string;
    jti: string;
    exp: number;
    returnTo: string;
    params: Record<string, unknown>;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    result?: Record<string, unknown>;
    save(ttl: number): Promise<string>;
  }

  export interface GrantModel {
    jti: string;
    accountId: string;
    clientId: string;
    addResourceScope(resource: string, scope: string): void;
    rejectResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    destroy(): Promise<void>;
  }

  export interface DeviceCodeModel {
    jti: string;
    clientId: string;
    params: Record<string, unknown>;
    accountId?: string;
    grantId?: string;
    scope?: string;
    resource?: string | string[];
    authTime?: number;
    error?: string;
    errorDescription?: string;
    isExpired: boolean;
    save(): Promise<string>;
  }

  export interface TokenModel {
    jti: string;
    save(): Promise<string>;
    generateTokenId(): string;
  }

  export const errors: Record<string, new (description?: string) => Error>;

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    Interaction: { find(uid: string): Promise<InteractionModel | undefined> };
    Grant: (new (init: { accountId: string; clientId: string }) => GrantModel) & { find(id: string): Promise<GrantModel | undefined> };
    DeviceCode: { findByUserCode(userCode: string, options?: { ignoreExpiration?: boolean }): Promise<DeviceCodeModel | undefined> };
    AccessToken: { prototype: TokenModel };
    RefreshToken: { prototype: TokenModel };
    Client: { find(id: string): Promise<{ clientId: string; clientName?: string } | undefined> };
  }
}
