import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config/env.ts';
import { redactUrl, serializeError, tokenHashPrefix } from '../../src/platform/logger.ts';

describe('configuration', () => {
  it('has working defaults: embedded database and local files under ./data', () => {
    const config = loadConfig({});
    assert.equal(config.PORT, 3000);
    assert.equal(config.database.kind, 'pglite');
    assert.equal(config.storage.kind, 'local');
    assert.equal(config.rateLimitStore, 'memory');
    assert.equal(config.publicBaseUrl, 'http://localhost:3000');
    assert.ok(Object.isFrozen(config));
  });

  it('lists every bad value in one error', () => {
    assert.throws(
      () => loadConfig({ PORT: 'eighty', RATE_LIMIT_ENDPOINT_PER_MINUTE: '-1', LOG_LEVEL: 'loud' }),
      (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /PORT/);
        assert.match(error.message, /RATE_LIMIT_ENDPOINT_PER_MINUTE/);
        assert.match(error.message, /LOG_LEVEL/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
  });

  it('derives the database, storage and counter store from what is set', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://localhost/x', REDIS_URL: 'redis://localhost:6379', S3_BUCKET: 'b', PUBLIC_BASE_URL: 'https://books.example.com/' });
    assert.equal(config.database.kind, 'postgres');
    assert.equal(config.storage.kind, 's3');
    assert.equal(config.rateLimitStore, 'redis');
    assert.equal(config.publicBaseUrl, 'https://books.example.com');
  });

  it('never logs a key given in the URL', () => {
    assert.equal(redactUrl('/v1/me?api_key=wsk_live_secret&x=1'), '/v1/me?api_key=[REDACTED]&x=1');
    // Recognised by the decoded name, as the router reads it.
    assert.equal(redactUrl('/v1/me?api%5Fkey=wsk_live_secret'), '/v1/me?api%5Fkey=[REDACTED]');
    assert.equal(redactUrl('/v1/me?x=1&%61pi_key=wsk_live_secret#f'), '/v1/me?x=1&%61pi_key=[REDACTED]');
    assert.equal(redactUrl('/v1/me?API_KEY=wsk_live_secret&bad=%E0%A4%A'), '/v1/me?API_KEY=[REDACTED]&bad=%E0%A4%A');
  });

  it('logs a sign-in token as a hash prefix', () => {
    const token = 'a'.repeat(43);
    assert.equal(redactUrl(`/read/Ab12/access/${token}?x=1`), `/read/Ab12/access/${tokenHashPrefix(token)}?x=1`);
    assert.match(tokenHashPrefix(token), /^\[sha256:[0-9a-f]{12}\]$/);
  });

  it('serialises errors without the values of a failed statement', () => {
    const cause = Object.assign(new Error('invalid input syntax for type integer: "ann@example.com"'), { code: '22P02', detail: 'Key (email)=(ann@example.com)', params: ['s3cret'] });
    const error = Object.assign(new Error('Failed query: insert into "leads" ("email") values ($1)\nparams: ann@example.com,s3cret'), { query: 'insert …', params: ['ann@example.com'], cause });
    const logged = JSON.stringify(serializeError(error));
    assert.doesNotMatch(logged, /ann@example|s3cret/);
    assert.match(logged, /Failed query: insert into/);
    assert.match(logged, /22P02/);
  });
});
