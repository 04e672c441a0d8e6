/**
 * The service's signing key: SECRET_KEY when set, else a random key created
 * once and kept in DATA_DIR/secret.key (mode 600), so signed reader sessions
 * survive restarts on a single machine without any setup.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './env.ts';

export async function loadSecretKey(config: Pick<Config, 'SECRET_KEY' | 'dataDir'>): Promise<string> {
  if (config.SECRET_KEY) return config.SECRET_KEY;
  const file = path.join(config.dataDir, 'secret.key');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const created = randomBytes(32).toString('base64url');
  try {
    // "wx": if another process created it first, use theirs.
    await writeFile(file, created, { mode: 0o600, flag: 'wx' });
    return created;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await readFile(file, 'utf8')).trim();
  }
}
