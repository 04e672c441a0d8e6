/**
 * Office document → PDF with LibreOffice headless.
 *
 * - Each job gets its own LibreOffice profile (-env:UserInstallation): two
 *   soffice processes sharing a profile block on its lock, and a profile left
 *   over from a crash can make the next start hang. It is deleted afterwards.
 * - The input is copied under a fixed name with the extension of its detected
 *   format: LibreOffice picks its import filter partly from the extension, and
 *   user filenames may hold anything (spaces, quotes, leading dashes).
 * - soffice is a shell script around soffice.bin, so it runs in its own
 *   process group and the whole group is killed on timeout or abort.
 * - soffice exits 0 even when it could not load the file; the only reliable
 *   success signal is the PDF it writes.
 * - Memory: soffice runs under an address-space limit (`prlimit --as`, from
 *   util-linux; inherited by soffice.bin), so a document that unpacks to
 *   gigabytes makes LibreOffice fail its allocations and stop instead of
 *   taking the machine's memory. Without prlimit it runs unlimited (the zip
 *   check of office-archive.ts still applies).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConversionError, abortedError } from './conversion.errors.ts';
import type { DocumentFormat } from './document-type.ts';

export const OFFICE_PACKAGES = 'libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui';
export const DEFAULT_OFFICE_TIMEOUT_MS = 120_000;
/**
 * Address space, not resident memory: LibreOffice reserves more than it
 * touches (470-620 MB of address space at its peak for the corpus's DOCX,
 * XLSX and PPTX files), so the limit sits at three times that. A 400 MB
 * document.xml took it to 2.8 GB resident without a limit.
 */
export const DEFAULT_OFFICE_MEMORY_LIMIT_MB = 2048;

export interface OfficeToPdfOptions {
  /** Scratch directory for this job; the PDF is written here as `document.pdf`. */
  workDir: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Path of the soffice binary; default: found on PATH or in the usual install folders. */
  sofficePath?: string;
  /** Address-space limit in MB (prlimit --as); 0 or absent: none. */
  memoryLimitMb?: number;
}

let prlimitPath: Promise<string | null> | null = null;
/** util-linux's prlimit, looked up once. */
function findPrlimit(): Promise<string | null> {
  prlimitPath ??= (async () => {
    for (const dir of [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/bin', '/bin']) {
      const file = path.join(dir, 'prlimit');
      if (await isExecutable(file)) return file;
    }
    return null;
  })();
  return prlimitPath;
}

const CANDIDATES = ['soffice', 'libreoffice'];
const INSTALL_DIRS = ['/usr/lib/libreoffice/program', '/opt/libreoffice/program', '/usr/local/bin', '/usr/bin'];

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The LibreOffice binary, or null when it is not installed. */
export async function findSoffice(): Promise<string | null> {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...INSTALL_DIRS];
  for (const name of CANDIDATES) {
    for (const dir of dirs) {
      const file = path.join(dir, name);
      if (await isExecutable(file)) return file;
    }
  }
  return null;
}

export async function officeToPdf(inputPath: string, format: DocumentFormat, options: OfficeToPdfOptions): Promise<string> {
  const { workDir, timeoutMs = DEFAULT_OFFICE_TIMEOUT_MS, signal } = options;
  if (signal?.aborted) throw abortedError(signal);
  const soffice = options.sofficePath ?? (await findSoffice());
  // Checked here, not left to spawn: under prlimit a missing soffice is prlimit's failure, not a spawn error.
  if (!soffice || !(await isExecutable(soffice))) {
    throw new ConversionError(
      'office_unavailable',
      `Office documents cannot be converted on this server: LibreOffice is not installed. Install the Debian packages ${OFFICE_PACKAGES}.`,
    );
  }

  const jobDir = path.join(workDir, `office-${process.pid}-${Date.now().toString(36)}`);
  const profileDir = path.join(jobDir, 'profile');
  const outDir = path.join(jobDir, 'out');
  await mkdir(outDir, { recursive: true });
  try {
    const source = path.join(jobDir, `input.${format}`);
    await copyFile(inputPath, source);
    const limitMb = options.memoryLimitMb ?? 0;
    const prlimit = limitMb > 0 ? await findPrlimit() : null;
    const sofficeArgs = [
      `-env:UserInstallation=${pathToFileURL(profileDir).href}`,
      '--headless',
      '--invisible',
      '--norestore',
      '--nolockcheck',
      '--nodefault',
      '--nofirststartwizard',
      '--convert-to',
      'pdf',
      '--outdir',
      outDir,
      source,
    ];
    const { output: stderr, signal: killedBy } = prlimit
      ? await runSoffice(prlimit, [`--as=${limitMb * 1024 * 1024}`, '--', soffice, ...sofficeArgs], { timeoutMs, signal, home: jobDir })
      : await runSoffice(soffice, sofficeArgs, { timeoutMs, signal, home: jobDir });

    const produced = path.join(outDir, 'input.pdf');
    const size = await stat(produced).then((s) => s.size, () => 0);
    if (size === 0 && prlimit && (killedBy !== null || /bad_alloc|std::bad_alloc|out of memory|cannot allocate/i.test(stderr))) {
      throw new ConversionError(
        'office_memory',
        `LibreOffice needed more than the ${limitMb.toLocaleString('en-US')} MB of memory allowed for one document and was stopped. ` +
          'The document is too large or damaged: save it again in Office (or as a PDF) and upload that.',
      );
    }
    if (size === 0) {
      const loadFailed = /could not be loaded|general error|source file/i.test(stderr);
      throw new ConversionError(
        'office_failed',
        loadFailed
          ? `LibreOffice could not open this ${format.toUpperCase()} document: it is damaged, password-protected, or not really a ${format.toUpperCase()} file.`
          : `LibreOffice could not convert this ${format.toUpperCase()} document to PDF.`,
      );
    }
    const pdfPath = path.join(workDir, 'document.pdf');
    await rename(produced, pdfPath);
    return pdfPath;
  } finally {
    await rm(jobDir, { recursive: true, force: true });
  }
}

function runSoffice(
  command: string,
  args: string[],
  { timeoutMs, signal, home }: { timeoutMs: number; signal?: AbortSignal; home: string },
): Promise<{ output: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal));
      return;
    }
    const child = spawn(command, args, {
      detached: true, // own process group, so soffice.bin dies with the wrapper
      stdio: ['ignore', 'pipe', 'pipe'],
      // A private HOME keeps LibreOffice from touching the service user's dotfiles.
      env: { ...process.env, HOME: home, SAL_USE_VCLPLUGIN: 'svp' },
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      if (output.length < 64 * 1024) output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);

    let failure: ConversionError | null = null;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      const limit = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
      failure = new ConversionError('timeout', `LibreOffice took longer than ${limit} to convert this document and was stopped.`);
      killGroup();
    }, timeoutMs);
    const onAbort = () => {
      failure = abortedError(signal);
      killGroup();
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new ConversionError('office_unavailable', `LibreOffice could not be started (${error.message}). Install the Debian packages ${OFFICE_PACKAGES}.`));
    });
    child.on('close', (code, killedBy) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      // soffice.bin may outlive the wrapper script; never leave it running.
      killGroup();
      if (failure) reject(failure);
      // The wrapper script reports soffice.bin's death by a signal as exit code 128 + n.
      else resolve({ output, signal: killedBy ?? (code !== null && code > 128 ? ('SIGKILL' as NodeJS.Signals) : null) });
    });
  });
}
