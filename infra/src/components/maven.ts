import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import { withFolderLock } from './folder-lock.ts';

/** A first resolution downloads about 100 MB from Maven Central; later ones copy from ~/.m2. */
const MAVEN_LOCK_TIMEOUT_MS = 10 * 60_000;

/** A Maven project of infra/ that resolves (and maybe builds) the jars a JVM server runs on. */
export interface MavenJars {
  /** The folder of its pom.xml, e.g. infra/kafka. */
  readonly projectDir: string;
  /** What the jars are for, in messages: "the Kafka broker". */
  readonly what: string;
  /** Goals before the copy of the dependencies (`package` builds the project's own jar). */
  readonly goals?: readonly string[];
  /** A jar whose name starts with this must be among them, or the resolution went wrong. */
  readonly requiredJar: string;
  /** Source folders whose changes call for a new build, besides pom.xml. */
  readonly sources?: readonly string[];
}

/** The newest modification time under `target` (a file or a folder tree); 0 when it is gone. */
function newestChange(target: string): number {
  if (!existsSync(target)) return 0;
  const stats = statSync(target);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(target).reduce(
    (newest, entry) => Math.max(newest, newestChange(path.join(target, entry))),
    stats.mtimeMs,
  );
}

/**
 * Resolves the project's runtime jars from Maven Central into `<projectDir>/target/libs`, once
 * (again only when pom.xml or a source changed; ~/.m2 caches between clones). Returns that
 * folder.
 */
export function resolveMavenJars(project: MavenJars): string {
  const pom = path.join(project.projectDir, 'pom.xml');
  const libs = path.join(project.projectDir, 'target', 'libs');
  const marker = path.join(libs, '.resolved');
  const inputsChanged = Math.max(
    statSync(pom).mtimeMs,
    ...(project.sources ?? []).map((source) => newestChange(path.join(project.projectDir, source))),
  );
  const upToDate = (): boolean => existsSync(marker) && statSync(marker).mtimeMs >= inputsChanged;
  if (!upToDate()) {
    // One Maven at a time per local repository, whatever the project or the clone: two that
    // fetch the same jar into ~/.m2 at once leave the other one copying it half written (Maven
    // 3.8 takes no lock there). Looked at again under the lock: the process that held it has
    // usually just resolved them.
    withFolderLock(
      path.join(os.homedir(), '.m2', '.outbox-inbox-resolving'),
      { what: `resolving the jars of ${project.what}`, timeoutMs: MAVEN_LOCK_TIMEOUT_MS },
      () => {
        if (!upToDate()) runMaven(project, pom, libs, marker);
      },
    );
  }
  if (!readdirSync(libs).some((file) => file.startsWith(project.requiredJar))) {
    throw new InfraError('MAVEN_FAILED', `no ${project.requiredJar} jar in ${libs}`, {
      hint: `delete ${libs} and try again`,
    });
  }
  return libs;
}

function runMaven(project: MavenJars, pom: string, libs: string, marker: string): void {
  const mvn = spawnSync('mvn', ['-v'], { encoding: 'utf8' });
  if (mvn.error || mvn.status !== 0) {
    throw new InfraError(
      'MAVEN_MISSING',
      `Maven (\`mvn\`) not found: it resolves the jars of ${project.what}`,
      { hint: 'install it (Debian: `apt-get install maven`)' },
    );
  }
  const result = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      pom,
      ...(project.goals ?? []),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libs}`,
      '-DincludeScope=runtime',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (result.status !== 0) {
    const logFile = path.join(project.projectDir, 'target', 'maven.log');
    mkdirSync(path.dirname(logFile), { recursive: true });
    writeFileSync(logFile, `${result.stdout}\n${result.stderr}`);
    throw new InfraError(
      'MAVEN_FAILED',
      `Maven could not resolve the jars of ${project.what} from Maven Central`,
      {
        hint: `check that Maven Central is reachable (\`mvn -f ${path.relative(process.cwd(), pom)} dependency:resolve\`)`,
        logFile,
      },
    );
  }
  writeFileSync(marker, `${new Date().toISOString()}\n`);
}
