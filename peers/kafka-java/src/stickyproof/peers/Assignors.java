package stickyproof.peers;

import java.util.List;

/**
 * The assignors the kafka-clients jar on the class path offers, by stickyproof's names
 * ({@code range}, {@code roundrobin}, {@code sticky}, {@code cooperative-sticky}).
 * Implemented once per side of the 2.4 interface change ({@link KafkaAssignor}).
 */
public interface Assignors {
    /** The names this release has, in a fixed order (an assignor class missing from the jar is left out). */
    List<String> names();

    /** A new instance of the assignor {@code name}; null when the release does not have it. */
    KafkaAssignor create(String name);

    /** The implementation the build compiled: {@code v24} when present, else {@code v20}. */
    static Assignors forThisRelease() {
        for (String impl : new String[] {"stickyproof.peers.v24.Assignors24", "stickyproof.peers.v20.Assignors20"}) {
            try {
                return (Assignors) Class.forName(impl).getDeclaredConstructor().newInstance();
            } catch (ClassNotFoundException e) {
                continue;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(impl + ": " + e, e);
            }
        }
        throw new IllegalStateException("neither v24 nor v20 assignors were compiled (pom.xml, harness.api)");
    }

    /** Whether the jar holds {@code className} (an assignor a later release added is absent from an earlier jar). */
    static boolean present(String className) {
        try {
            Class.forName(className, false, Assignors.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
