import { serviceCapabilities, type RemoteClient } from '../client/index.ts';
import { serviceLimitsLine, type Capabilities } from '../protocol/index.ts';

/** What the agent's service does beyond the spec (history, bases), asked once it answers. */
export class ServiceInfo {
  /** What the service said, once it answered (asked again while it has not). */
  private known: Capabilities | null = null;
  private asking: Promise<unknown> | null = null;

  constructor(
    private readonly client: RemoteClient,
    private readonly serviceUrl: string,
  ) {}

  /** Asked once per agent; null while the service does not answer. */
  async capabilities(): Promise<Capabilities | null> {
    this.known ??= await serviceCapabilities(this.client);
    return this.known;
  }

  /**
   * The one line that says what this service cannot protect, or null: a service of the spec alone keeps no history
   * and cannot tell an edit of what a writer saw from an overwrite of what it never saw.
   */
  async limits(): Promise<string | null> {
    return this.limitsOf(await this.capabilities());
  }

  /**
   * limits() as known now, without waiting (the window's status): while the service has not answered, it is asked
   * in the background, one question at a time, and the line comes with a later status.
   */
  knownLimits(): string | null {
    if (!this.known && !this.asking)
      this.asking = this.capabilities()
        .catch(() => null)
        .finally(() => (this.asking = null));
    return this.limitsOf(this.known);
  }

  private limitsOf(capabilities: Capabilities | null): string | null {
    return serviceLimitsLine(this.serviceUrl, capabilities);
  }
}
