package dev.distlock.unwoven;

import dev.distlock.annotation.DistributedLock;

/** A locked method in a package the test's aop.xml does not let the agent weave, as if the weaving were forgotten. */
public class UnwovenShop {

	@DistributedLock(key = "'stock:' + #sku")
	public void purchase(String sku) {
	}

}
