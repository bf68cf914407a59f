import type { TestProject } from 'vitest/node';
import { startPostgresCluster } from './postgres.ts';

/**
 * The Postgres pass's global set-up: one cluster for the whole pass (initdb and a start take ~2 s), each test
 * service a new database in it (~50 ms), removed with the cluster at the end.
 */
export default async function setup(project: TestProject) {
  const cluster = await startPostgresCluster();
  project.provide('postgresAdminUrl', cluster.url('postgres'));
  return () => cluster.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
  }
}
