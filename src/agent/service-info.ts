import { RemoteError, askCapabilities, serviceCapabilities, type RemoteClient } from '../client/index.ts';
import { serviceLimitsLine, type Capabilities, type WhoamiValue } from '../protocol/index.ts';
import type { MemberOfService } from '../sync/index.ts';

/** What the agent's service does beyond the spec (history, bases), asked once it answers. */
export class ServiceInfo {
  /** What the service said, once it answered (asked again while it has not). */
  private known: Capabilities | null = null;
  private asking: Promise<unknown> | null = null;
  /** Who the service takes this agent's token for, once it said (null: a service without members). */
  private me: Promise<WhoamiValue | null> | null = null;

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
   * Who the service takes this agent for (`whoami`), asked once and kept: a service whose capabilities
   * announce no members (the spec's, an older flowsync) is null without a call, as is a 404 (the label alone, as
   * before). A failure (no answer, a token refused) is not kept, and asked again next time: the own-write checks
   * wait for it rather than judge on the label alone.
   */
  whoami(): Promise<WhoamiValue | null> {
    this.me ??= (async () => {
      const capabilities = await askCapabilities(this.client);
      this.known ??= capabilities;
      if (capabilities.members !== true) return null;
      try {
        return await this.client.members.whoami({});
      } catch (error) {
        if (error instanceof RemoteError && error.statusCode === 404) return null;
        throw error;
      }
    })().catch((error: unknown) => {
      this.me = null;
      throw error;
    });
    return this.me;
  }

  /** The member the service knows this agent's token by; null: a service without members. */
  async member(): Promise<MemberOfService | null> {
    const me = await this.whoami();
    // A service with members older than the id in its answer: no id to compare, the label alone.
    return me === null ? null : { id: me.member_id ?? null, readOnly: me.role === 'read' };
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
