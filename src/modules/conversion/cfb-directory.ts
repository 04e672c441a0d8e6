/**
 * Reads the names of the root-level streams of an OLE2 Compound File (CFB),
 * the container of Word 97-2003 .doc, Excel .xls, PowerPoint .ppt and of
 * password-encrypted OOXML. All of them start with the same 8 magic bytes, so
 * the stream names are what tells them apart ("WordDocument", "Workbook",
 * "PowerPoint Document", "EncryptedPackage").
 *
 * Only the FAT sectors needed to walk the directory chain are read, so a
 * 100 MB .ppt costs a few KB of I/O. Every loop is bounded: the input is
 * untrusted and a crafted FAT can point in circles.
 */
import { open, type FileHandle } from 'node:fs/promises';

const MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const END_OF_CHAIN = 0xfffffffe;
const MAX_SECTOR = 0xfffffffa;
const DIR_ENTRY_SIZE = 128;
const NO_STREAM = 0xffffffff;
/** 4096 directory sectors = 131,072 entries at 4 KiB sectors: far beyond any real document. */
const MAX_DIRECTORY_SECTORS = 4096;

export function isCfb(header: Uint8Array): boolean {
  return header.length >= 8 && MAGIC.equals(header.subarray(0, 8));
}

interface DirEntry {
  name: string;
  type: number;
  left: number;
  right: number;
  child: number;
}

/** Root-level entry names, or null when the container is too damaged to read. */
export async function readCfbRootNames(filePath: string): Promise<string[] | null> {
  const handle = await open(filePath, 'r');
  try {
    return await readRootNames(handle);
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  if (bytesRead < length) throw new Error('short read');
  return buffer;
}

async function readRootNames(handle: FileHandle): Promise<string[] | null> {
  const header = await readAt(handle, 0, 512);
  if (!isCfb(header)) return null;
  const sectorShift = header.readUInt16LE(0x1e);
  if (sectorShift !== 9 && sectorShift !== 12) return null;
  const sectorSize = 1 << sectorShift;
  const entriesPerFatSector = sectorSize / 4;
  const sectorOffset = (sector: number) => (sector + 1) * sectorSize;

  // The DIFAT lists the FAT sectors: 109 in the header, the rest in a chain.
  const fatSectors: number[] = [];
  for (let i = 0; i < 109; i++) fatSectors.push(header.readUInt32LE(0x4c + i * 4));
  let difatSector = header.readUInt32LE(0x44);
  for (let hops = 0; difatSector <= MAX_SECTOR && hops < 1024; hops++) {
    const sector = await readAt(handle, sectorOffset(difatSector), sectorSize);
    for (let i = 0; i < entriesPerFatSector - 1; i++) fatSectors.push(sector.readUInt32LE(i * 4));
    difatSector = sector.readUInt32LE(sectorSize - 4);
  }

  const fatCache = new Map<number, Buffer>();
  async function nextSector(sector: number): Promise<number> {
    const fatIndex = Math.floor(sector / entriesPerFatSector);
    const fatSector = fatSectors[fatIndex];
    if (fatSector === undefined || fatSector > MAX_SECTOR) throw new Error('sector outside the FAT');
    let fat = fatCache.get(fatIndex);
    if (!fat) {
      fat = await readAt(handle, sectorOffset(fatSector), sectorSize);
      fatCache.set(fatIndex, fat);
    }
    return fat.readUInt32LE((sector % entriesPerFatSector) * 4);
  }

  const entries: DirEntry[] = [];
  const seen = new Set<number>();
  let sector = header.readUInt32LE(0x30);
  while (sector !== END_OF_CHAIN) {
    if (sector > MAX_SECTOR || seen.has(sector) || seen.size >= MAX_DIRECTORY_SECTORS) return null;
    seen.add(sector);
    const data = await readAt(handle, sectorOffset(sector), sectorSize);
    for (let offset = 0; offset < sectorSize; offset += DIR_ENTRY_SIZE) {
      const nameLength = Math.min(data.readUInt16LE(offset + 0x40), 64);
      entries.push({
        // The stored length counts the UTF-16 terminator.
        name: data.toString('utf16le', offset, offset + Math.max(0, nameLength - 2)),
        type: data[offset + 0x42] ?? 0,
        left: data.readUInt32LE(offset + 0x44),
        right: data.readUInt32LE(offset + 0x48),
        child: data.readUInt32LE(offset + 0x4c),
      });
    }
    sector = await nextSector(sector);
  }

  const root = entries[0];
  if (!root || root.type !== 5) return null;
  // Root-level entries are the red-black tree hanging off the root's child.
  const names: string[] = [];
  const visited = new Set<number>();
  const stack = [root.child];
  while (stack.length > 0) {
    const id = stack.pop();
    if (id === undefined || id === NO_STREAM || visited.has(id)) continue;
    visited.add(id);
    const entry = entries[id];
    if (!entry) continue;
    names.push(entry.name);
    stack.push(entry.left, entry.right);
  }
  return names;
}
