package dev.distlock.testing.autoconfigure.slice;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application class a test slice of this package finds, as a slice finds an application's. */
@SpringBootApplication(proxyBeanMethods = false)
public class SliceApplication {

}
