/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The page-turn sound, made on the spot with Web Audio: a short burst of
 * band-passed noise shaped like paper sliding. No audio file, no request.
 * Browsers start audio only after a user gesture, so unlock() is called from one.
 */
export class TurnSound {
  enabled: boolean;
  private context: AudioContext | null = null;
  private buffer: AudioBuffer | null = null;

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  unlock(): void {
    if (!this.enabled) return;
    try {
      this.context ??= new AudioContext();
      if (this.context.state === 'suspended') void this.context.resume();
    } catch {
      this.enabled = false;
    }
  }

  private noise(context: AudioContext): AudioBuffer {
    if (this.buffer) return this.buffer;
    const length = Math.floor(context.sampleRate * 0.32);
    const buffer = context.createBuffer(1, length, context.sampleRate);
    const samples = buffer.getChannelData(0);
    for (let i = 0; i < length; i++) {
      const t = i / length;
      // Rustle: noise with a slow wobble, rising fast and dying away.
      samples[i] = (Math.random() * 2 - 1) * (0.65 + 0.35 * Math.sin(i / 180)) * Math.min(1, t * 12) * (1 - t) ** 2;
    }
    this.buffer = buffer;
    return buffer;
  }

  play(): void {
    const context = this.context;
    if (!this.enabled || !context) return;
    // The first turn is also the gesture that unlocked the context: it may still be resuming.
    if (context.state !== 'running') {
      if (context.state === 'suspended') void context.resume().then(() => context.state === 'running' && this.start(context), () => undefined);
      return;
    }
    this.start(context);
  }

  private start(context: AudioContext): void {
    const source = context.createBufferSource();
    source.buffer = this.noise(context);
    const filter = context.createBiquadFilter();
    filter.type = 'bandpass';
    filter.frequency.value = 2400;
    filter.Q.value = 0.7;
    const gain = context.createGain();
    gain.gain.value = 0.5;
    source.connect(filter).connect(gain).connect(context.destination);
    source.start();
  }
}
