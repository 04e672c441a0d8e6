/**
 * The PDF a reader downloads, made by qpdf (run as a child process on
 * temporary files) when it is not the stored file as it is:
 * - a page range: the page or spread shown, for books whose download mode is
 *   `single` or `spread` (bulk settings' `downloadable_pdf`);
 * - a download password: AES-256, the same password opening and owning it.
 * The passwords travel in an argument file (qpdf's @file), never on the
 * command line where `ps` would show them; a password with a line break
 * (which an argument file cannot hold) is refused rather than exposed.
 * Needs the qpdf binary (Debian: apt-get install qpdf).
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class QpdfMissingError extends Error {
  override name = 'QpdfMissingError';
}

const MAX_CONCURRENT = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<() => void> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error.code === 'ENOENT' ? new QpdfMissingError('qpdf is not installed (apt-get install qpdf)') : error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

export interface DownloadOptions {
  /** Opens a stored PDF that is itself encrypted. */
  sourcePassword?: string | null;
  /** Protects the download (user and owner password alike, AES-256). */
  password?: string | null;
  /** Only these pages, first to last (1-based, inclusive). */
  pages?: [number, number] | null;
  qpdf?: string;
  timeoutMs?: number;
}

/**
 * A copy of `input` with only `pages` and protected by `password`, as asked.
 * The returned stream removes its temporary files when it closes.
 */
export async function prepareDownload(input: Readable, options: DownloadOptions): Promise<{ body: Readable; size: number }> {
  if ([options.password, options.sourcePassword].some((p) => p && /[\r\n]/.test(p))) {
    throw new Error('A password with a line break cannot be passed to qpdf without showing it on its command line.');
  }
  const release = await slot();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-pdf-'));
  const cleanup = () => rm(dir, { recursive: true, force: true }).catch(() => undefined);
  try {
    const source = path.join(dir, 'in.pdf');
    const target = path.join(dir, 'out.pdf');
    await pipeline(input, createWriteStream(source, { mode: 0o600 }));
    const args = [
      ...(options.sourcePassword ? [`--password=${options.sourcePassword}`] : []),
      ...(options.password ? ['--encrypt', options.password, options.password, '256', '--'] : []),
      ...(options.pages ? ['--pages', '.', `${options.pages[0]}-${options.pages[1]}`, '--'] : []),
      source, target,
    ];
    const argsFile = path.join(dir, 'args');
    await writeFile(argsFile, `${args.join('\n')}\n`, { mode: 0o600 });
    const result = await run(options.qpdf ?? 'qpdf', [`@${argsFile}`], options.timeoutMs ?? 120_000);
    // 0: success; 3: success with warnings (a slightly damaged input).
    if (result.code !== 0 && result.code !== 3) throw new Error(`qpdf failed (exit ${result.code}): ${result.stderr.trim()}`);
    const { size } = await stat(target);
    const body = createReadStream(target);
    body.once('close', () => void cleanup());
    return { body, size };
  } catch (error) {
    await cleanup();
    throw error;
  } finally {
    release();
  }
}
