/**
 * Password-protects a PDF for download with qpdf (AES-256), run as a child
 * process on temporary files. The passwords travel in an argument file
 * (qpdf's @file), never on the command line where `ps` would show them.
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

/**
 * A copy of `input` that opens only with `password` (user and owner password
 * alike, AES-256). `sourcePassword` opens an input that is itself encrypted.
 * The returned stream removes its temporary files when it closes.
 */
export async function encryptPdf(
  input: Readable,
  password: string,
  options: { sourcePassword?: string | null; qpdf?: string; timeoutMs?: number } = {},
): Promise<{ body: Readable; size: number }> {
  const release = await slot();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-pdf-'));
  const cleanup = () => rm(dir, { recursive: true, force: true }).catch(() => undefined);
  try {
    const source = path.join(dir, 'in.pdf');
    const target = path.join(dir, 'out.pdf');
    await pipeline(input, createWriteStream(source, { mode: 0o600 }));
    const args = [
      ...(options.sourcePassword ? [`--password=${options.sourcePassword}`] : []),
      '--encrypt', password, password, '256', '--',
      source, target,
    ];
    let argv: string[];
    if (args.some((a) => /[\r\n]/.test(a))) {
      argv = args; // an argument file holds one argument per line
    } else {
      const argsFile = path.join(dir, 'args');
      await writeFile(argsFile, `${args.join('\n')}\n`, { mode: 0o600 });
      argv = [`@${argsFile}`];
    }
    const result = await run(options.qpdf ?? 'qpdf', argv, options.timeoutMs ?? 120_000);
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
