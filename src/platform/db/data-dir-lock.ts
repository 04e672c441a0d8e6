/**
 * PGlite admits one process. The process that opens the embedded database
 * holds DATA_DIR/flipbook.lock (its pid); a second process refuses to open it,
 * and a lock left by a dead process is taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  readonly pid: number;
  constructor(pid: number, dataDir: string) {
    super(`The embedded database in ${dataDir} is in use by process ${pid}. Stop it first, or talk to it through its admin socket.`);
    this.pid = pid;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockHolder(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(path.join(dataDir, 'flipbook.lock'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** Takes the lock or throws DataDirLockedError; returns the release function. */
export function acquireDataDirLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'flipbook.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = lockHolder(dataDir);
      if (holder !== null && holder !== process.pid) throw new DataDirLockedError(holder, dataDir);
      rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`Could not take the lock in ${dataDir}`);
}
