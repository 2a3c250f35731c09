// Runs DynamoDB Local bound to one address, and stops it when its parent goes away.
//
// Run as a single-file source program (Java 11+), with DynamoDBLocal.jar on the class path:
//   java -cp DynamoDBLocal.jar LoopbackDynamoDbLocal.java <bind address> <DynamoDB Local flags...>
//
// Why not `java -jar DynamoDBLocal.jar`: its server is Jetty's `new Server(port)`, which listens
// on every interface, and the jar has no flag to change that. This builds the same server from
// the same flags, binds its connector to the given address before it starts, then waits on
// stdin: end of input (the parent closed the pipe, or died, even by SIGKILL) stops the server,
// closing its database, and exits 0. SIGTERM does the same through a shutdown hook.

import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackDynamoDbLocal {
  private LoopbackDynamoDbLocal() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: LoopbackDynamoDbLocal <bind address> [DynamoDB Local flags]");
      System.exit(2);
    }
    String[] flags = java.util.Arrays.copyOfRange(args, 1, args.length);
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(flags);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    for (Connector connector : jetty.getConnectors()) {
      ((ServerConnector) connector).setHost(args[0]);
    }
    proxy.safeStart(); // unlike start(), throws when the port cannot be bound

    Thread stopper = new Thread(() -> stopQuietly(proxy));
    Runtime.getRuntime().addShutdownHook(stopper);
    while (System.in.read() != -1) {
      // nothing is ever written; only the end of input matters
    }
    Runtime.getRuntime().removeShutdownHook(stopper);
    stopQuietly(proxy);
    System.exit(0);
  }

  private static void stopQuietly(DynamoDBProxyServer proxy) {
    try {
      proxy.stop();
    } catch (Exception error) {
      System.err.println("DynamoDB Local did not stop cleanly: " + error);
    }
  }
}
