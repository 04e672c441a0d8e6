import type { Config } from '../config/env.ts';
import { LocalStorage } from './local-storage.ts';
import { S3Storage } from './s3-storage.ts';
import type { Storage } from './storage.ts';

export function createStorage(config: Config): Storage {
  if (config.storage.kind === 'local') return new LocalStorage(config.storage.root);
  return new S3Storage({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT || undefined,
    accessKeyId: config.S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY || undefined,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    publicUrl: config.S3_PUBLIC_URL || undefined,
  });
}
