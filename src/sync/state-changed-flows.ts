/**
 * Flows whose acknowledged versions changed since the look at the service last compared them, per repository:
 * the quick look compares them whatever the service's aggregate says. Its memo holds only the
 * service's side; a write of this checkout between two looks, then a teammate's that brought the service back to
 * the memo's aggregate, left a file deleted there on disk here, unnamed. In memory: a restart's first look is full.
 */
export class ChangedFlows {
  private readonly byRepo = new Map<number, Set<string>>();

  add(repoId: number, flowPath: string): void {
    let flows = this.byRepo.get(repoId);
    if (flows === undefined) this.byRepo.set(repoId, (flows = new Set()));
    flows.add(flowPath);
  }

  list(repoId: number): string[] {
    return [...(this.byRepo.get(repoId) ?? [])];
  }

  /** These flows were compared with the service: changes after this are the next look's. */
  forget(repoId: number, flowPaths: readonly string[]): void {
    const flows = this.byRepo.get(repoId);
    for (const flowPath of flowPaths) flows?.delete(flowPath);
  }
}
