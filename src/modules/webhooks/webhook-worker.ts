/**
 * The webhook loop of a worker process: the relay turns new events into
 * deliveries and the dispatcher sends what is due. They poll (the relay
 * every 100 ms when idle, the dispatcher every 200 ms; at once while there is more). The relay hands the deliveries it
 * creates straight to the dispatcher (leased at insert) as far as there is
 * room; the dispatcher's claim is woken only for what is left in the table:
 * deliveries the relay could not hand over, while its last claim found work
 * and a slot freed up, or on request (a test event, a redelivery). Retries
 * that come due are found by the idle poll. An event reaches its receivers
 * well within a second.
 */
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import type { OutboundClient } from '../../platform/outbound/outbound-client.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { WebhookRelay } from './relay.ts';
import type { SecretBox } from './secrets.ts';

/** Idle polls: the relay's sets how soon a new event is seen, the dispatcher's how soon a retry that came due is. */
const RELAY_IDLE_MS = 100;
const DISPATCH_IDLE_MS = 200;

export class WebhookWorker {
  readonly relay: WebhookRelay;
  readonly dispatcher: WebhookDispatcher;
  private readonly log: Logger;
  private stopped = false;
  private loops: Promise<void>[] = [];
  private wakeDispatch: (() => void) | null = null;
  /** A wake-up that came while the dispatcher was busy claiming: its next sleep is skipped. */
  private wokenWhileBusy = false;
  private wakeTimer: NodeJS.Timeout | null = null;

  /** Whether the last claim found deliveries: then a freed slot claims again at once (a backlog in the table). */
  private claimedLast = false;

  constructor(deps: { db: Db; outbound: OutboundClient; box: SecretBox; log: Logger; perEndpoint: number; perEndpointMax?: number; total: number }) {
    this.log = deps.log;
    this.relay = new WebhookRelay({ db: deps.db });
    this.dispatcher = new WebhookDispatcher({ ...deps });
    this.relay.handoff = this.dispatcher;
    this.dispatcher.onCapacity = () => {
      if (this.claimedLast) this.wake();
    };
  }

  /** Wakes the dispatcher now (new deliveries, a freed slot, a redelivery). */
  wake(): void {
    // Coalesced: many requests finishing together make one claim.
    if (this.wakeTimer) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeNow();
    }, 5);
  }

  private wakeNow(): void {
    const wake = this.wakeDispatch;
    this.wakeDispatch = null;
    if (wake) wake();
    else this.wokenWhileBusy = true;
  }

  start(): void {
    this.loops = [this.loop('relay', async () => {
      const { created, leased, more } = await this.relay.tick();
      if (created > leased) this.wake();
      return more;
    }, RELAY_IDLE_MS), this.loop('dispatch', async () => {
      this.claimedLast = (await this.dispatcher.claim()) > 0;
      return this.claimedLast;
    }, DISPATCH_IDLE_MS)];
  }

  private async loop(name: string, step: () => Promise<boolean>, idleMs: number): Promise<void> {
    while (!this.stopped) {
      let more = false;
      try {
        more = await step();
      } catch (error) {
        if (this.stopped) break;
        this.log.error({ err: error, loop: name }, 'webhook loop step failed; retrying');
      }
      if (name === 'dispatch' && this.wokenWhileBusy) {
        this.wokenWhileBusy = false;
        continue;
      }
      if (!more && !this.stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, idleMs);
          if (name === 'dispatch') this.wakeDispatch = () => { clearTimeout(timer); resolve(); };
        });
      }
    }
  }

  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeNow();
    await Promise.allSettled(this.loops);
    await this.dispatcher.stop(timeoutMs);
  }
}
